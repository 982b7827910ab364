// SPDX-License-Identifier: GPL-2.0
/*
 * pcap_replay: sends every frame of a classic libpcap file (Ethernet
 * link type) out of one interface as fast as it can, through an AF_PACKET
 * raw socket and sendmmsg() in batches, and prints what it did.  The
 * attack scenarios use it to replay roce-flood's packets (crafted on the
 * host) at an rrxe device from another namespace; it is what tcpreplay
 * --topspeed does, without a package to install.
 *
 *   pcap_replay IFACE FILE
 *
 * Output, one line:
 *   sent=N failed=N bytes=N seconds=S pps=P
 * Exit 0 when every frame was sent, 1 when some could not be, 2 on a bad
 * file or interface.  Frames longer than the interface MTU plus the
 * Ethernet header are counted as failed (the kernel refuses them).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define BATCH 64

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t major, minor;
	int32_t zone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_rec_hdr {
	uint32_t sec, usec, caplen, len;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = {0};
	unsigned long sent = 0, failed = 0, bytes = 0;
	const struct pcap_file_hdr *fh;
	size_t off, size;
	struct stat st;
	unsigned char *map;
	double t0, secs;
	int fd, s, n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IFACE FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "pcap_replay: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	size = st.st_size;
	if (size < sizeof(*fh)) {
		fprintf(stderr, "pcap_replay: %s: too short for a pcap header\n", argv[2]);
		return 2;
	}
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "pcap_replay: mmap %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	fh = (const void *)map;
	if (fh->magic != 0xa1b2c3d4 || fh->linktype != 1) {
		fprintf(stderr, "pcap_replay: %s: not a little-endian microsecond pcap of Ethernet frames\n",
			argv[2]);
		return 2;
	}
	s = socket(AF_PACKET, SOCK_RAW, 0);
	if (s < 0) {
		fprintf(stderr, "pcap_replay: AF_PACKET socket: %s\n", strerror(errno));
		return 2;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = if_nametoindex(argv[1]);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "pcap_replay: interface %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (bind(s, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "pcap_replay: bind to %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	memset(msgs, 0, sizeof(msgs));
	t0 = now();
	off = sizeof(*fh);
	for (;;) {
		const struct pcap_rec_hdr *rh = (const void *)(map + off);
		int last = off + sizeof(*rh) > size;

		if (!last) {
			if (off + sizeof(*rh) + rh->caplen > size) {
				fprintf(stderr, "pcap_replay: truncated record at byte %zu\n", off);
				return 2;
			}
			iov[n].iov_base = (void *)(map + off + sizeof(*rh));
			iov[n].iov_len = rh->caplen;
			msgs[n].msg_hdr.msg_iov = &iov[n];
			msgs[n].msg_hdr.msg_iovlen = 1;
			n++;
			off += sizeof(*rh) + rh->caplen;
		}
		if (n == BATCH || (last && n)) {
			int i = 0;

			/* A frame the kernel refuses fails alone; retry the rest. */
			while (i < n) {
				int r = sendmmsg(s, msgs + i, n - i, 0);

				if (r > 0) {
					for (int k = i; k < i + r; k++)
						bytes += iov[k].iov_len;
					sent += r;
					i += r;
				} else if (r < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) {
					usleep(100);
				} else {
					failed++;
					i++;
				}
			}
			n = 0;
		}
		if (last)
			break;
	}
	secs = now() - t0;
	printf("sent=%lu failed=%lu bytes=%lu seconds=%.3f pps=%.0f\n", sent, failed, bytes, secs,
	       secs > 0 ? sent / secs : 0.0);
	return failed ? 1 : 0;
}
