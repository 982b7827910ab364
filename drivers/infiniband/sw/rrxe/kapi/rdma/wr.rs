// SPDX-License-Identifier: GPL-2.0

//! Work requests of kernel consumers (`struct ib_send_wr` and its
//! containers, `struct ib_recv_wr`), read into safe values for the driver,
//! which writes them into the QP's rings as librxe would.
//!
//! Kernel consumers give DMA addresses in their SGEs; an rrxe device has
//! no DMA device (`ib_uses_virt_dma`), so those are kernel virtual
//! addresses of the consumer's buffers, valid until the request completes.
//! The only place they are dereferenced at post time is the copy of
//! inline data ([`SendWr::copy_inline`]).
//!
//! A user QP never takes work requests through here: uverbs' own
//! `post_send` path carries user addresses, which must not be read as
//! kernel ones; [`super::qp::post_send`] refuses them.

use core::marker::PhantomData;

use kernel::{bindings, prelude::*};

use super::device::Driver;

/// The most SGEs one work request may name (the largest QP limit).
const MAX_SGE: usize = 1024;

/// The UD part of a send work request.
pub(crate) struct UdWr<'a, T: Driver> {
    /// The address handle.
    pub(crate) ah: &'a T::Ah,
    pub(crate) remote_qpn: u32,
    pub(crate) remote_qkey: u32,
}

/// A send work request.
pub(crate) struct SendWr<'a, T: Driver> {
    pub(crate) wr_id: u64,
    /// `IB_WR_*`.
    pub(crate) opcode: u32,
    /// `IB_SEND_*`.
    pub(crate) flags: u32,
    /// Immediate data (wire order) or the rkey to invalidate (host order).
    pub(crate) ex: [u8; 4],
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    pub(crate) compare_add: u64,
    pub(crate) swap: u64,
    /// UD and GSI QPs: the destination.
    pub(crate) ud: Option<UdWr<'a, T>>,
    /// `IB_WR_REG_MR`: the registration.
    pub(crate) reg: Option<RegWr<'a, T>>,
    sges: SgeList<'a>,
}

/// A fast registration (`struct ib_reg_wr`): region `mr` gets key `key`
/// and rights `access` for the blocks `map_mr_sg` listed.
pub(crate) struct RegWr<'a, T: Driver> {
    pub(crate) mr: &'a T::Mr,
    pub(crate) key: u32,
    /// `IB_ACCESS_*`.
    pub(crate) access: u32,
}

impl<'a, T: Driver> UdWr<'a, T> {
    /// Reads the datagram fields of `ud`; `EINVAL` without an AH.
    ///
    /// # Safety
    ///
    /// `ud`'s AH, if not null, is one of driver `T`'s, live for `'a`
    /// (ib_core's contract: while the request is posted).
    unsafe fn read(ud: bindings::ib_ud_wr) -> Result<Self> {
        if ud.ah.is_null() {
            return Err(EINVAL);
        }
        Ok(Self {
            // SAFETY: Per the function's contract, an AH of `T`'s, live.
            ah: unsafe { super::ah::data::<T>(ud.ah) },
            remote_qpn: ud.remote_qpn,
            remote_qkey: ud.remote_qkey,
        })
    }
}

impl<'a, T: Driver> RegWr<'a, T> {
    /// Reads a fast registration request, staging the MR's page list at
    /// its current address (the consumer may have rebased it after
    /// mapping); `EINVAL` without an MR or for one with no page list.
    ///
    /// # Safety
    ///
    /// `r`'s MR, if not null, is one of driver `T`'s, live for `'a`
    /// (ib_core's contract: while the request is posted).
    unsafe fn read(r: bindings::ib_reg_wr) -> Result<Self> {
        if r.mr.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: Per the function's contract, an MR of `T`'s, live.
        let pages = unsafe { super::mr::fast_pages::<T>(r.mr) }.ok_or(EINVAL)?;
        // SAFETY: `r.mr` is non-null and live (the function's contract);
        // `iova` is a plain field.
        pages.stage_iova(unsafe { (*r.mr).iova });
        Ok(Self {
            // SAFETY: Per the function's contract, an MR of `T`'s, live.
            mr: unsafe { super::mr::data::<T>(r.mr) },
            key: r.key,
            access: r.access as u32,
        })
    }
}

/// A scatter/gather element of a kernel work request (`struct ib_sge`):
/// `length` bytes at `addr` in the region whose local key is `lkey`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    /// Address (I/O virtual address in the region).
    pub(crate) addr: u64,
    /// Length in bytes.
    pub(crate) length: u32,
    /// Local key of the region.
    pub(crate) lkey: u32,
}

/// A copy of `struct ib_sge`.
pub(super) fn sge(s: bindings::ib_sge) -> Sge {
    Sge {
        addr: s.addr,
        length: s.length,
        lkey: s.lkey,
    }
}

/// A kernel consumer's SGE list (`sg_list`, `num_sge`), read one element
/// at a time and never referenced: consumers may place it unaligned
/// (ib_iser's receive and login descriptors are `__packed`, their
/// `ib_sge` at a 4-byte offset), where a `&[ib_sge]` would be undefined
/// behaviour.
///
/// # Invariants
///
/// `ptr` points to `len` SGEs, valid for reads (not necessarily aligned)
/// for `'a`, and `len <= MAX_SGE`.
#[derive(Clone, Copy)]
struct SgeList<'a> {
    ptr: *const bindings::ib_sge,
    len: usize,
    _list: PhantomData<&'a bindings::ib_sge>,
}

impl<'a> SgeList<'a> {
    /// The list of `n` SGEs at `list`; `EINVAL` for a negative count, more
    /// than `MAX_SGE` or a null list of at least one.
    ///
    /// # Safety
    ///
    /// `list` points to `n` SGEs valid for reads for `'a` (or `n` is 0);
    /// it need not be aligned.
    unsafe fn new(list: *const bindings::ib_sge, n: i32) -> Result<Self> {
        let len = usize::try_from(n)?;
        if len > MAX_SGE || (len > 0 && list.is_null()) {
            return Err(EINVAL);
        }
        // INVARIANT: Per the function's contract, and checked above.
        Ok(Self {
            ptr: list,
            len,
            _list: PhantomData,
        })
    }

    /// Element `i` (< `len`), copied out.
    fn get(&self, i: usize) -> Sge {
        assert!(i < self.len);
        // SAFETY: Per the type invariant, SGE `i < len` is readable for
        // `'a`; `read_unaligned` takes it at any alignment.
        sge(unsafe { self.ptr.add(i).read_unaligned() })
    }

    /// The SGEs, copied out in order.
    fn iter(self) -> impl Iterator<Item = Sge> + 'a {
        (0..self.len).map(move |i| self.get(i))
    }
}

impl<'a, T: Driver> SendWr<'a, T> {
    /// Reads the request at `ptr`, posted to a QP of type `qp_type`.
    /// `EINVAL` for an opcode this layer does not take, or a request
    /// without the AH or MR it needs.  The request and its container are
    /// copied out, never referenced: consumers may place them unaligned
    /// (isert's `__packed` descriptors hold their `ib_send_wr`).
    ///
    /// # Safety
    ///
    /// `ptr` is a kernel consumer's work request (not necessarily
    /// aligned), valid for `'a`, in the container its opcode and the QP
    /// type imply (ib_core's contract), naming AHs (UD) or an MR (REG_MR)
    /// of driver `T` that live while it is posted.
    pub(super) unsafe fn read(ptr: *const bindings::ib_send_wr, qp_type: u32) -> Result<Self> {
        // SAFETY: Per the function's contract, readable at any alignment.
        let wr = unsafe { ptr.read_unaligned() };
        // SAFETY: Every member of the union is a plain 64-bit value.
        let wr_id = unsafe { wr.__bindgen_anon_1.wr_id };
        // SAFETY: Both members are plain 32-bit values.
        let ex = unsafe { wr.ex.imm_data }.to_ne_bytes();
        // SAFETY: Per the function's contract, the list is valid for `'a`.
        let sges = unsafe { SgeList::new(wr.sg_list, wr.num_sge)? };
        let mut out = Self {
            wr_id,
            opcode: wr.opcode,
            flags: wr.send_flags as u32,
            ex,
            remote_addr: 0,
            rkey: 0,
            compare_add: 0,
            swap: 0,
            ud: None,
            reg: None,
            sges,
        };
        if qp_type == bindings::ib_qp_type_IB_QPT_UD || qp_type == bindings::ib_qp_type_IB_QPT_GSI {
            // SAFETY: Work requests to UD QPs are `ib_ud_wr`s (ib_core's
            // contract, the function's), readable at any alignment.
            let ud = unsafe { ptr.cast::<bindings::ib_ud_wr>().read_unaligned() };
            // SAFETY: Per the function's contract, its AH is one of `T`'s,
            // live while the request is posted.
            out.ud = Some(unsafe { UdWr::read(ud) }?);
            return Ok(out);
        }
        // SAFETY: Per the function's contract, `wr` heads the container its
        // opcode implies, valid for `'a`, and a REG_MR names an MR of `T`'s
        // live while the request is posted.
        unsafe { out.read_container(ptr) }?;
        Ok(out)
    }

    /// Reads the fields of a connected QP's request that its opcode's
    /// container (`ib_rdma_wr`, `ib_atomic_wr`, `ib_reg_wr`) adds to
    /// `ib_send_wr`; `EINVAL` for an opcode this layer does not take.
    ///
    /// # Safety
    ///
    /// `ptr` is a kernel consumer's work request (not necessarily
    /// aligned), valid for the call, at the head of the container its
    /// opcode implies (ib_core's contract), naming, for REG_MR, an MR of
    /// driver `T` live while it is posted.
    unsafe fn read_container(&mut self, ptr: *const bindings::ib_send_wr) -> Result {
        match self.opcode {
            bindings::ib_wr_opcode_IB_WR_RDMA_WRITE
            | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
            | bindings::ib_wr_opcode_IB_WR_RDMA_READ => {
                // SAFETY: These opcodes come in an `ib_rdma_wr`, readable
                // at any alignment.
                let r = unsafe { ptr.cast::<bindings::ib_rdma_wr>().read_unaligned() };
                self.remote_addr = r.remote_addr;
                self.rkey = r.rkey;
            }
            bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
            | bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => {
                // SAFETY: These opcodes come in an `ib_atomic_wr`, readable
                // at any alignment.
                let a = unsafe { ptr.cast::<bindings::ib_atomic_wr>().read_unaligned() };
                self.remote_addr = a.remote_addr;
                self.rkey = a.rkey;
                self.compare_add = a.compare_add;
                self.swap = a.swap;
            }
            bindings::ib_wr_opcode_IB_WR_SEND
            | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
            | bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV
            | bindings::ib_wr_opcode_IB_WR_LOCAL_INV => {}
            bindings::ib_wr_opcode_IB_WR_REG_MR => {
                // SAFETY: REG_MR comes in an `ib_reg_wr`, readable at any
                // alignment.
                let r = unsafe { ptr.cast::<bindings::ib_reg_wr>().read_unaligned() };
                // SAFETY: Per the function's contract, an MR of `T`'s.
                self.reg = Some(unsafe { RegWr::read(r) }?);
            }
            _ => return Err(EINVAL),
        }
        Ok(())
    }

    /// The SGEs.
    pub(crate) fn sges(&self) -> impl Iterator<Item = Sge> + '_ {
        self.sges.iter()
    }

    /// Number of SGEs.
    pub(crate) fn num_sge(&self) -> usize {
        self.sges.len
    }

    /// Copies the bytes the SGEs name into `out` (inline data), which must
    /// be exactly as long as their total; `EINVAL` otherwise, or if an
    /// SGE is not in the kernel's direct map.
    pub(crate) fn copy_inline(&self, out: &mut [u8]) -> Result {
        let mut at = 0usize;
        for s in self.sges.iter() {
            let len = s.length as usize;
            let end = at
                .checked_add(len)
                .filter(|e| *e <= out.len())
                .ok_or(EINVAL)?;
            if len > 0 {
                check_direct_map(s.addr, len)?;
                // Virt DMA (module docs): the SGE's address is the kernel
                // virtual address of the consumer's buffer.
                // SAFETY: `len` bytes there, in the direct map (checked), valid
                // during `post_send`; `out[at..end]` is in bounds.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        s.addr as usize as *const u8,
                        out.as_mut_ptr().add(at),
                        len,
                    )
                };
            }
            at = end;
        }
        if at != out.len() {
            return Err(EINVAL);
        }
        Ok(())
    }
}

/// `EINVAL` unless `[addr, addr + len)` (len > 0) starts and ends in the
/// kernel's direct map.
pub(crate) fn check_direct_map(addr: u64, len: usize) -> Result {
    let last = addr.checked_add(len as u64 - 1).ok_or(EINVAL)?;
    // SAFETY: `__virt_addr_valid` only computes on the address.
    let first_ok = unsafe { bindings::__virt_addr_valid(addr as kernel::ffi::c_ulong) };
    // SAFETY: As above.
    let ok = first_ok && unsafe { bindings::__virt_addr_valid(last as kernel::ffi::c_ulong) };
    if ok {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// A receive work request.
pub(crate) struct RecvWr<'a> {
    pub(crate) wr_id: u64,
    sges: SgeList<'a>,
}

impl<'a> RecvWr<'a> {
    /// Reads the request at `ptr`, copied out (it may be unaligned).
    ///
    /// # Safety
    ///
    /// `ptr` is a kernel consumer's work request (not necessarily
    /// aligned), valid for `'a`.
    pub(super) unsafe fn read(ptr: *const bindings::ib_recv_wr) -> Result<Self> {
        // SAFETY: Per the function's contract, readable at any alignment.
        let wr = unsafe { ptr.read_unaligned() };
        Ok(Self {
            // SAFETY: Every member of the union is a plain 64-bit value.
            wr_id: unsafe { wr.__bindgen_anon_1.wr_id },
            // SAFETY: Per the function's contract, the list is valid for `'a`.
            sges: unsafe { SgeList::new(wr.sg_list, wr.num_sge)? },
        })
    }

    /// The SGEs.
    pub(crate) fn sges(&self) -> impl Iterator<Item = Sge> + '_ {
        self.sges.iter()
    }

    /// Number of SGEs.
    pub(crate) fn num_sge(&self) -> usize {
        self.sges.len
    }
}

/// Runs `post` on each request of a kernel consumer's receive list, in
/// order; on the first failure `bad_wr` names it and the ones before it
/// stay posted.  Returns whether any was posted, and 0 or the errno.
///
/// # Safety
///
/// `wr` is a kernel consumer's non-null list, valid for the call, and
/// `bad_wr` is writable.
pub(super) unsafe fn post_recv_list(
    wr: *const bindings::ib_recv_wr,
    bad_wr: *mut *const bindings::ib_recv_wr,
    mut post: impl FnMut(&RecvWr<'_>) -> Result,
) -> (bool, kernel::ffi::c_int) {
    let mut cur = wr;
    let mut posted = false;
    while !cur.is_null() {
        // SAFETY: Per the function's contract, each request is valid.
        let res = unsafe { RecvWr::read(cur) }.and_then(|w| post(&w));
        if let Err(e) = res {
            // SAFETY: `bad_wr` is writable per the function's contract.
            unsafe { *bad_wr = cur };
            return (posted, e.to_errno());
        }
        posted = true;
        // SAFETY: Per the function's contract, `cur` is a non-null request
        // of a list valid for the call, so its `next` field is readable
        // (at any alignment; no reference is made).
        cur = unsafe { core::ptr::addr_of!((*cur).next).read_unaligned() };
    }
    (posted, 0)
}

#[kernel::macros::kunit_tests(rrxe_kernel_wr)]
mod tests {
    use super::*;

    /// As ib_iser's receive descriptor has it: the SGEs at a 4-byte offset
    /// of a packed structure, itself 8-aligned, so they are misaligned.
    #[repr(C, packed)]
    struct Packed {
        pad: [u8; 4],
        sges: [bindings::ib_sge; 2],
    }

    #[repr(C, align(8))]
    struct Aligned(Packed);

    fn ib_sge(addr: u64, length: u32, lkey: u32) -> bindings::ib_sge {
        bindings::ib_sge { addr, length, lkey }
    }

    #[test]
    fn an_unaligned_sge_list_is_read_and_a_bad_count_refused() -> Result {
        let a = Aligned(Packed {
            pad: [0; 4],
            sges: [ib_sge(0x1000, 64, 5), ib_sge(0x2000, 8, 6)],
        });
        let p = &a.0;
        let list = core::ptr::addr_of!(p.sges).cast::<bindings::ib_sge>();
        assert_ne!(list as usize % core::mem::align_of::<bindings::ib_sge>(), 0);
        // SAFETY: All-zero is a valid `ib_recv_wr` (integers, null pointers).
        let mut wr: bindings::ib_recv_wr = unsafe { core::mem::zeroed() };
        wr.sg_list = list.cast_mut();
        wr.num_sge = 2;
        {
            // SAFETY: `wr` names the two SGEs of `p`, which outlives `r`.
            let r = unsafe { RecvWr::read(&wr)? };
            assert_eq!(r.num_sge(), 2);
            let mut it = r.sges();
            assert_eq!(
                it.next(),
                Some(Sge {
                    addr: 0x1000,
                    length: 64,
                    lkey: 5
                })
            );
            assert_eq!(
                it.next(),
                Some(Sge {
                    addr: 0x2000,
                    length: 8,
                    lkey: 6
                })
            );
            assert_eq!(it.next(), None);
        }
        for n in [-1, MAX_SGE as i32 + 1] {
            wr.num_sge = n;
            // SAFETY: A count the read refuses before touching the list.
            assert!(unsafe { RecvWr::read(&wr) }.is_err());
        }
        wr.sg_list = core::ptr::null_mut();
        wr.num_sge = 1;
        // SAFETY: A null list, refused before it is read.
        assert!(unsafe { RecvWr::read(&wr) }.is_err());
        Ok(())
    }
}
