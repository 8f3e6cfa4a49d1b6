// SPDX-License-Identifier: GPL-2.0
/*
 * UDP datagrams of 64 bytes to ADDR:PORT for SECONDS, as fast as
 * sendmmsg() takes them, 64 a call: a load for the receiving side's
 * softirq that a sender under TCG can keep up. Prints how many it sent.
 *
 * usage: udp_flood ADDR PORT SECONDS
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	char payload[64] = "ksft_perfmon";
	unsigned long long sent = 0;
	double end;
	int fd, i, n;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: udp_flood ADDR PORT SECONDS\n");
		return 2;
	}
	to.sin_port = htons(atoi(argv[2]));
	end = now() + atof(argv[3]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udp_flood: socket");
		return 1;
	}
	iov.iov_base = payload;
	iov.iov_len = sizeof(payload);
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &to;
		msgs[i].msg_hdr.msg_namelen = sizeof(to);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (now() < end) {
		n = sendmmsg(fd, msgs, BATCH, 0);
		if (n > 0)
			sent += n;
	}
	printf("%llu\n", sent);
	close(fd);
	return 0;
}
