// SPDX-License-Identifier: GPL-2.0

//! Networking abstractions: `struct net_device` handles and the netdevice
//! notifier chain, socket buffers and bounded queues of them, UDP tunnel
//! sockets, output routes, and per-namespace teardown.  Each type that
//! holds a C object states in its `# Invariants` section what it owns or
//! borrows; what it owns (a reference, a socket, a registration) it gives
//! back on drop.

pub(crate) mod netdev;
pub(crate) mod notifier;
pub(crate) mod pernet;
pub(crate) mod route;
pub(crate) mod skb;
pub(crate) mod skb_queue;
pub(crate) mod udp_tunnel;
