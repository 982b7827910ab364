// SPDX-License-Identifier: GPL-2.0

//! The errno a protocol-core error becomes where the driver returns it to
//! a caller: a work request or a packet that cannot be written is
//! `EINVAL`, as in C rxe.  (The protocol core is also a host crate, so it
//! cannot name the kernel's `Error`; the conversions live here.)  Errors
//! whose errno depends on where they occur (an access check is `EINVAL`
//! for `advise_mr` and a NAK on the wire) are mapped where they occur.

use kernel::error::{code::EINVAL, Error};

use crate::proto::builder::BuildError;
use crate::proto::header::HeaderError;
use crate::proto::icrc::IcrcError;
use crate::proto::post::PostError;

impl From<PostError> for Error {
    /// The ring slot cannot hold the work request (too many SGEs, too
    /// much inline data).
    fn from(_: PostError) -> Self {
        EINVAL
    }
}

impl From<BuildError> for Error {
    /// The transport headers do not fit the opcode or the buffer.
    fn from(_: BuildError) -> Self {
        EINVAL
    }
}

impl From<HeaderError> for Error {
    /// A network header does not fit its buffer.
    fn from(_: HeaderError) -> Self {
        EINVAL
    }
}

impl From<IcrcError> for Error {
    /// The headers given to the ICRC are not a RoCEv2 packet's.
    fn from(_: IcrcError) -> Self {
        EINVAL
    }
}
