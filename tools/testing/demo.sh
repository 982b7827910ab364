#!/bin/bash
# `make demo`, run inside the test VM: create an rrxe device on a veth,
# show it with the stock tools, remove it, unload the module.
set -e
run() { printf '\n\033[1m# %s\033[0m\n' "$*"; "$@"; }
modprobe veth
ip link add veth0 type veth peer name veth1
ip link set veth0 up && ip link set veth1 up
ip addr add 10.0.0.1/24 dev veth0
ip -6 addr add 2001:db8::1/64 dev veth0 nodad
run modprobe rdma_rrxe
run rdma link add rrxe0 type rrxe netdev veth0
run rdma link show
run ibv_devices
sleep 1 # let ib_core's GID work pick up the addresses
run ibv_devinfo -v -d rrxe0
run rdma link delete rrxe0
run rdma link show
run rmmod rdma_rrxe
echo
echo "demo: rrxe0 created, driven by the stock librxe provider, and removed cleanly"
