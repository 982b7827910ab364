// SPDX-License-Identifier: GPL-2.0

//! The layout of the rxe user ABI (include/uapi/rdma/rdma_user_rxe.h),
//! which rdma-core's rxe provider (librxe) shares with the kernel through
//! mapped queues: the header of a mapped queue (`struct rxe_queue_buf`) and
//! the work queue entries in its slots (`struct rxe_send_wqe`, `struct
//! rxe_recv_wqe` and the `struct rxe_dma_info` / `struct rxe_sge` they
//! carry).  Sizes and offsets are in bytes, taken from the C definitions,
//! so a driver decoding these structures by hand can check its layout
//! against them at compile time.

use core::mem::{offset_of, size_of};
use kernel::bindings;

/// `sizeof(struct rxe_send_wqe)`: a send WQE without its SGEs or inline
/// data.
pub(crate) const SEND_WQE_SIZE: usize = size_of::<bindings::rxe_send_wqe>();
/// `offsetof(struct rxe_send_wqe, dma)`.
pub(crate) const SEND_WQE_DMA_OFFSET: usize = offset_of!(bindings::rxe_send_wqe, dma);
/// `sizeof(struct rxe_recv_wqe)`: a receive WQE without its SGEs.
pub(crate) const RECV_WQE_SIZE: usize = size_of::<bindings::rxe_recv_wqe>();
/// `offsetof(struct rxe_recv_wqe, dma)`.
pub(crate) const RECV_WQE_DMA_OFFSET: usize = offset_of!(bindings::rxe_recv_wqe, dma);
/// `sizeof(struct rxe_dma_info)`: a WQE's data description without its
/// SGEs or inline data.
pub(crate) const DMA_INFO_SIZE: usize = size_of::<bindings::rxe_dma_info>();
/// `sizeof(struct rxe_sge)`: one scatter/gather entry.
pub(crate) const SGE_SIZE: usize = size_of::<bindings::rxe_sge>();

/// `offsetof(struct rxe_queue_buf, log2_elem_size)`.
pub(crate) const QUEUE_LOG2_ELEM_SIZE_OFFSET: usize =
    offset_of!(bindings::rxe_queue_buf, log2_elem_size);
/// `offsetof(struct rxe_queue_buf, index_mask)`.
pub(crate) const QUEUE_INDEX_MASK_OFFSET: usize = offset_of!(bindings::rxe_queue_buf, index_mask);
/// `offsetof(struct rxe_queue_buf, producer_index)`.
pub(crate) const QUEUE_PRODUCER_INDEX_OFFSET: usize =
    offset_of!(bindings::rxe_queue_buf, producer_index);
/// `offsetof(struct rxe_queue_buf, consumer_index)`.
pub(crate) const QUEUE_CONSUMER_INDEX_OFFSET: usize =
    offset_of!(bindings::rxe_queue_buf, consumer_index);
/// `sizeof(struct rxe_queue_buf)`: the queue header; slots start after it.
pub(crate) const QUEUE_HEADER_SIZE: usize = size_of::<bindings::rxe_queue_buf>();
