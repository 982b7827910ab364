// SPDX-License-Identifier: GPL-2.0

//! Networking abstractions: `struct net_device` handles and the netdevice
//! notifier chain, socket buffers and bounded queues of them, UDP tunnel
//! sockets, output routes, and per-namespace teardown.

pub(crate) mod netdev;
pub(crate) mod notifier;
pub(crate) mod pernet;
pub(crate) mod route;
pub(crate) mod skb;
pub(crate) mod skb_queue;
pub(crate) mod udp_tunnel;
