// SPDX-License-Identifier: GPL-2.0

//! Networking abstractions: `struct net_device` handles and the netdevice
//! notifier chain.

pub(crate) mod netdev;
pub(crate) mod notifier;
