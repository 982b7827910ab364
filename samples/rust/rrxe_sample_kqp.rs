// SPDX-License-Identifier: GPL-2.0

//! rrxe_sample_kqp: kernel queue pairs on rrxe's abstraction layer.
//!
//! Where `rrxe_sample_client` only watches devices, this module moves
//! data with kernel verbs the way a kernel ULP (NVMe over RDMA, an RDMA
//! file system) does, through `kapi::rdma::consumer`, with no `unsafe`
//! of its own.  For each RoCE device whose port 1 is active and has an
//! IPv4 RoCE v2 GID, when ib_core tells it of the device, it:
//!
//! 1. allocates a PD, two directly polled CQs, two 64 KiB kernel buffers
//!    and a fast-registration region, and connects two RC QPs to each
//!    other over the device's own IPv4 GID (loopback through the
//!    driver's packet path: every byte is a RoCE v2 packet);
//! 2. registers buffer B under a fresh key (`IB_WR_REG_MR`), the one-sided
//!    operations' target;
//! 3. SENDs 4 KiB from A into a receive posted on B;
//! 4. RDMA WRITEs 32 KiB into B's region and RDMA READs 16 KiB back;
//! 5. times 256 RDMA WRITEs of 16 KiB, one outstanding at a time;
//! 6. invalidates the key (`IB_WR_LOCAL_INV`) and WRITEs with it again:
//!    the peer must refuse it (a remote access error on A) and B's bytes
//!    must be unchanged;
//!
//! checking every byte and completion, logs each step, and tears it all
//! down (Rust's drop order, which the borrows enforce).  It does the same
//! on C rxe's devices: the abstractions are ib_core's, not rrxe's.
//!
//! ```text
//! # rdma link add rk0 type rrxe netdev veth0   (with an IPv4 address)
//! # modprobe rrxe_sample_kqp
//! rrxe_sample_kqp: rk0: QPs 18 -> 19 over 10.81.0.1 (GID index 1)
//! ...
//! rrxe_sample_kqp: rk0: kernel QP test passed
//! ```

use kernel::prelude::*;
use kernel::time::{delay::fsleep, Delta, Instant, Monotonic};

/// rrxe's protocol core (the link `proto`), which `kapi` builds on.
#[allow(dead_code, unreachable_pub, unused_attributes, unused_imports)]
#[path = "proto/src/lib.rs"]
mod proto;

/// rrxe's abstraction layer (the link `kapi`); this module uses its
/// client and consumer sides.
#[allow(dead_code, unused_imports, unused_macros)]
mod kapi;

use kapi::rdma::client::{ClientHandler, ClientRegistration, IbDevice};
use kapi::rdma::consumer::{
    buffer::DmaBuf,
    cq::{Completion, Cq},
    fast_mr::FastRegMr,
    pd::Pd,
    qp::{Access, QpSize, RcQp, SendOp},
    roce_gid::RoceGid,
};

const OWNER: &CStr = c"rrxe_sample_kqp";
const BUF: usize = 64 * 1024;
const SEND_LEN: usize = 4096;
const WRITE_OFF: usize = 8192;
const WRITE_LEN: usize = 32 * 1024;
const READ_LEN: usize = 16 * 1024;
const TIMED_WRITES: u32 = 256;
const TIMED_LEN: usize = 16 * 1024;
/// `IB_WC_REM_ACCESS_ERR`.
const REM_ACCESS_ERR: u32 = 10;

/// `EBADMSG`: data or a completion that is not what the step expects.
fn ebadmsg() -> Error {
    Error::from_errno(-(kernel::bindings::EBADMSG as i32))
}

/// A failed step: what was being done and why.
struct Failure(&'static str, Error);

type Step<T = ()> = core::result::Result<T, Failure>;

trait At<T> {
    fn at(self, what: &'static str) -> Step<T>;
}

impl<T> At<T> for Result<T> {
    fn at(self, what: &'static str) -> Step<T> {
        self.map_err(|e| Failure(what, e))
    }
}

/// Byte `i` of the pattern with seed `seed`.
fn pattern(seed: u8, i: usize) -> u8 {
    (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8
}

fn fill(buf: &DmaBuf, off: usize, len: usize, seed: u8) -> Result {
    let mut chunk = [0u8; 256];
    let mut done = 0;
    while done < len {
        let n = chunk.len().min(len - done);
        for (k, b) in chunk[..n].iter_mut().enumerate() {
            *b = pattern(seed, done + k);
        }
        buf.write(off + done, &chunk[..n])?;
        done += n;
    }
    Ok(())
}

/// Whether `buf[off .. off + len)` holds the pattern `seed`.
fn holds(buf: &DmaBuf, off: usize, len: usize, seed: u8) -> Result<bool> {
    let mut chunk = [0u8; 256];
    let mut done = 0;
    while done < len {
        let n = chunk.len().min(len - done);
        buf.read(off + done, &mut chunk[..n])?;
        if chunk[..n]
            .iter()
            .enumerate()
            .any(|(k, &b)| b != pattern(seed, done + k))
        {
            return Ok(false);
        }
        done += n;
    }
    Ok(true)
}

/// Waits (up to 2 s) for the next completion on `cq`, which must be
/// `wr_id`'s.
fn next_completion(cq: &Cq<'_>, wr_id: u64) -> Result<Completion> {
    let mut c = [Completion::default(); 1];
    for _ in 0..2000 {
        if cq.poll(&mut c)? == 1 {
            if c[0].wr_id != wr_id {
                pr_err!(
                    "completion for request {} while waiting for {}\n",
                    c[0].wr_id,
                    wr_id
                );
                return Err(EIO);
            }
            return Ok(c[0]);
        }
        fsleep(Delta::from_millis(1));
    }
    Err(ETIMEDOUT)
}

/// Like [`next_completion`], and the request must have succeeded.
fn completed(cq: &Cq<'_>, wr_id: u64) -> Result<Completion> {
    let c = next_completion(cq, wr_id)?;
    if !c.ok() {
        pr_err!(
            "request {} completed with '{}' ({})\n",
            wr_id,
            c.status_str(),
            c.status
        );
        return Err(EIO);
    }
    Ok(c)
}

fn equal(ok: bool) -> Result {
    if ok {
        Ok(())
    } else {
        Err(ebadmsg())
    }
}

fn run(dev: &IbDevice, gid: &RoceGid) -> Step {
    let name = dev.name();
    // Declared in creation order: dropped in reverse, QPs first.
    let pd = Pd::alloc(dev, OWNER).at("allocating the PD")?;
    let a = DmaBuf::new(dev, BUF).at("allocating buffer A")?;
    let b = DmaBuf::new(dev, BUF).at("allocating buffer B")?;
    let cq_a = Cq::alloc(dev, 16, OWNER).at("allocating CQ A")?;
    let cq_b = Cq::alloc(dev, 16, OWNER).at("allocating CQ B")?;
    let mut mr = FastRegMr::alloc(&pd, (BUF >> 12) as u32).at("allocating the region")?;
    mr.map(&b, 0, BUF as u32).at("mapping buffer B")?;
    let mr = mr;
    let size = QpSize {
        send_wr: 8,
        recv_wr: 8,
    };
    let qa = RcQp::create(&pd, &cq_a, &cq_a, size).at("creating QP A")?;
    let qb = RcQp::create(&pd, &cq_b, &cq_b, size).at("creating QP B")?;
    let (psn_a, psn_b) = (0x1000, 0xff_fff0);
    qa.connect(gid, gid, qb.qp_num(), psn_a, psn_b)
        .at("connecting QP A")?;
    qb.connect(gid, gid, qa.qp_num(), psn_b, psn_a)
        .at("connecting QP B")?;
    let ip = gid.ipv4();
    pr_info!(
        "{}: QPs {} -> {} over {}.{}.{}.{} (GID index {})\n",
        name,
        qa.qp_num(),
        qb.qp_num(),
        ip[0],
        ip[1],
        ip[2],
        ip[3],
        gid.index
    );

    let rw = Access {
        remote_write: true,
        remote_read: true,
    };
    qb.post_send(1, SendOp::RegMr(&mr, rw))
        .at("posting REG_MR")?;
    completed(&cq_b, 1).at("registering buffer B")?;
    let (rkey, iova) = (mr.rkey(), mr.iova());
    pr_info!(
        "{}: REG_MR: rkey {:#x}, iova {:#x}, {} bytes, remote read and write\n",
        name,
        rkey,
        iova,
        BUF
    );

    fill(&a, 0, SEND_LEN, 1).at("filling A")?;
    qb.post_recv(2, &b.sge(&pd, 0, SEND_LEN as u32).at("B's receive")?)
        .at("posting a receive")?;
    qa.post_send(
        3,
        SendOp::Send(a.sge(&pd, 0, SEND_LEN as u32).at("A's SEND")?),
    )
    .at("posting a SEND")?;
    completed(&cq_a, 3).at("the SEND's completion")?;
    let got = completed(&cq_b, 2).at("the receive's completion")?;
    if got.byte_len as usize != SEND_LEN {
        return Err(Failure("the receive's length", ebadmsg()));
    }
    equal(holds(&b, 0, SEND_LEN, 1).at("reading B")?).at("comparing the SEND's data")?;
    pr_info!(
        "{}: SEND {} bytes: received {}, data equal\n",
        name,
        SEND_LEN,
        got.byte_len
    );

    fill(&a, 0, WRITE_LEN, 2).at("filling A")?;
    let write = SendOp::Write {
        local: a.sge(&pd, 0, WRITE_LEN as u32).at("A's WRITE")?,
        addr: iova + WRITE_OFF as u64,
        rkey,
    };
    qa.post_send(4, write).at("posting an RDMA WRITE")?;
    completed(&cq_a, 4).at("the WRITE's completion")?;
    equal(holds(&b, WRITE_OFF, WRITE_LEN, 2).at("reading B")?).at("comparing the WRITE's data")?;
    pr_info!(
        "{}: RDMA WRITE {} bytes into B's region: data equal\n",
        name,
        WRITE_LEN
    );

    let read = SendOp::Read {
        local: a.sge(&pd, WRITE_LEN, READ_LEN as u32).at("A's READ")?,
        addr: iova + WRITE_OFF as u64,
        rkey,
    };
    qa.post_send(5, read).at("posting an RDMA READ")?;
    let got = completed(&cq_a, 5).at("the READ's completion")?;
    equal(holds(&a, WRITE_LEN, READ_LEN, 2).at("reading A")?).at("comparing the READ's data")?;
    pr_info!(
        "{}: RDMA READ {} bytes back: {} bytes, data equal\n",
        name,
        READ_LEN,
        got.byte_len
    );

    let start = Instant::<Monotonic>::now();
    for i in 0..TIMED_WRITES {
        let off = (i as usize % 4) * TIMED_LEN;
        let write = SendOp::Write {
            local: a.sge(&pd, off, TIMED_LEN as u32).at("A's WRITE")?,
            addr: iova + off as u64,
            rkey,
        };
        qa.post_send(100 + u64::from(i), write)
            .at("posting a timed WRITE")?;
        completed(&cq_a, 100 + u64::from(i)).at("a timed WRITE's completion")?;
    }
    let us = start.elapsed().as_micros_ceil().max(1);
    let bytes = i64::from(TIMED_WRITES) * TIMED_LEN as i64;
    pr_info!(
        "{}: {} RDMA WRITEs of {} bytes, one at a time: {} us, {} MB/s, {} us each\n",
        name,
        TIMED_WRITES,
        TIMED_LEN,
        us,
        bytes / us,
        us / i64::from(TIMED_WRITES)
    );

    // The key-state rule: once invalidated, the key is refused.
    fill(&b, WRITE_OFF, 512, 3).at("filling B")?;
    qb.post_send(6, SendOp::LocalInv(rkey))
        .at("posting LOCAL_INV")?;
    completed(&cq_b, 6).at("the LOCAL_INV's completion")?;
    fill(&a, 0, 512, 4).at("filling A")?;
    let stale = SendOp::Write {
        local: a.sge(&pd, 0, 512).at("A's WRITE")?,
        addr: iova + WRITE_OFF as u64,
        rkey,
    };
    qa.post_send(7, stale)
        .at("posting a WRITE with the invalidated key")?;
    let c = next_completion(&cq_a, 7).at("the stale WRITE's completion")?;
    if c.status != REM_ACCESS_ERR {
        pr_err!(
            "{}: a WRITE with an invalidated key completed with '{}'\n",
            name,
            c.status_str()
        );
        return Err(Failure("refusing the invalidated key", ebadmsg()));
    }
    equal(holds(&b, WRITE_OFF, 512, 3).at("reading B")?)
        .at("B unchanged after the refused WRITE")?;
    pr_info!(
        "{}: LOCAL_INV of rkey {:#x}; a WRITE with it: '{}', B unchanged\n",
        name,
        rkey,
        c.status_str()
    );
    Ok(())
}

struct KernelQpTest;

impl ClientHandler for KernelQpTest {
    const NAME: &'static CStr = c"rrxe_sample_kqp";

    fn added(dev: &IbDevice) {
        let name = dev.name();
        let port = match dev.query_port(1) {
            Ok(p) if p.state == 4 => p,
            _ => {
                pr_info!("{}: skipped: port 1 is not active\n", name);
                return;
            }
        };
        let Ok(gid) = RoceGid::find_ipv4(dev, 1, port.gid_tbl_len) else {
            pr_info!("{}: skipped: no IPv4 RoCE v2 GID on port 1\n", name);
            return;
        };
        match run(dev, &gid) {
            Ok(()) => pr_info!("{}: kernel QP test passed\n", name),
            Err(Failure(what, e)) => {
                pr_err!("{}: kernel QP test failed: {}: {:?}\n", name, what, e)
            }
        }
    }

    fn removed(_dev: &IbDevice) {}
}

#[pin_data]
struct SampleModule {
    #[pin]
    client: ClientRegistration<KernelQpTest>,
}

impl kernel::InPlaceModule for SampleModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            client <- ClientRegistration::register(),
        })
    }
}

module! {
    type: SampleModule,
    name: "rrxe_sample_kqp",
    authors: ["rrxe developers"],
    description: "Sample: kernel RC QPs (SEND, WRITE, READ, fast registration) on rrxe's Rust abstraction layer",
    license: "GPL",
}
