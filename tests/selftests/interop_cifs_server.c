// SPDX-License-Identifier: GPL-2.0
/*
 * interop_cifs_server ADDR SECONDS PORT...
 *
 * An AF_SMBDIRECT SOCK_STREAM server for cifs.ko: listens on ADDR at each
 * PORT (cifs.ko tries 5445, which it allows only on iWARP devices, and
 * then 445, only on InfiniBand/RoCE), prints "listening" once all are up,
 * accepts the first connection within SECONDS, prints the negotiated
 * SMB-Direct parameters, and reads the first message: it must be an intact
 * SMB2 NEGOTIATE request (ProtocolId 0xFE 'S' 'M' 'B', command 0). Then it
 * answers with an SMB2 ERROR response, STATUS_NOT_SUPPORTED, which makes
 * the mount fail (expected), and waits for cifs.ko to disconnect. Exit 0
 * only when the request was right; otherwise one line on stderr says why.
 *
 * Why not just close: cifs.ko then reconnects while the failed mount is
 * torn down, and 7.2's smbdirect (cifs.ko's SMB-Direct client, not this
 * module) can free a connection whose idle timer is still armed when the
 * teardown interrupts that reconnect: seen once in make check
 * (2026-11-23), a KASAN report storm from the timer that hung the guest.
 * An answer over a transport that stays up leaves cifs.ko nothing to
 * reconnect.
 */
#include "sd_test.h"
#include "sd_smb2.h"

#define MAXPORTS 4

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "interop_cifs_server: timed out\n");
	_exit(3);
}

int main(int argc, char **argv)
{
	struct sd_target t = { .kind = "", .netdev = "" };
	struct pollfd pf[MAXPORTS];
	struct smbdirect_params p;
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	unsigned char *msg;
	const char *why;
	int i, n, fd, r, seconds, port;
	long len;

	if (argc < 4 || argc - 3 > MAXPORTS) {
		fprintf(stderr, "usage: %s ADDR SECONDS PORT...\n", argv[0]);
		return 2;
	}
	t.addr = argv[1];
	t.af = strchr(argv[1], ':') ? AF_INET6 : AF_INET;
	seconds = atoi(argv[2]);
	signal(SIGALRM, on_alarm);
	alarm(seconds + 30);

	n = argc - 3;
	for (i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sd_addr(&t, atoi(argv[3 + i]), &ss);
		int one = 1;

		fd = sd_socket(SOCK_STREAM);
		if (fd < 0) {
			fprintf(stderr, "socket: %s\n", fd == -ENOENT ?
				"af_smbdirect is not loaded" : strerror(-fd));
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 4)) {
			fprintf(stderr, "bind/listen %s port %s: %s\n", argv[1], argv[3 + i],
				strerror(errno));
			return 1;
		}
		pf[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	printf("listening\n");
	fflush(stdout);

	r = poll(pf, n, seconds * 1000);
	if (r <= 0) {
		fprintf(stderr, "accept: %s\n", r ? strerror(errno) :
			"no connection from cifs.ko");
		return 1;
	}
	for (i = 0; i < n && !(pf[i].revents & POLLIN); i++)
		;
	if (i == n) {
		fprintf(stderr, "accept: listener revents 0x%x\n", pf[0].revents);
		return 1;
	}
	port = atoi(argv[3 + i]);
	fd = accept(pf[i].fd, (struct sockaddr *)&peer, &plen);
	if (fd < 0) {
		fprintf(stderr, "accept on port %d: %s\n", port, strerror(errno));
		return 1;
	}
	sd_set_timeouts(fd, 20000);
	printf("accepted on port %d\n", port);
	r = sd_get_params(fd, &p);
	if (r) {
		fprintf(stderr, "GET_PARAMS: %s\n", strerror(-r));
		return 1;
	}
	printf("negotiated: version 0x%x transport %u max_send_size %u max_receive_size %u "
	       "max_fragmented_send_size %u max_fragmented_receive_size %u "
	       "send_credit_target %u receive_credit_max %u keepalive_interval %u "
	       "initiator_depth %u responder_resources %u\n",
	       p.version, p.transport, p.max_send_size, p.max_receive_size,
	       p.max_fragmented_send_size, p.max_fragmented_receive_size,
	       p.send_credit_target, p.receive_credit_max, p.keepalive_interval,
	       p.initiator_depth, p.responder_resources);
	if (sd_check_rd_depths(&p))
		return 1;

	msg = malloc(1 << 20);
	len = sd_stream_recv(fd, msg, 1 << 20);
	if (len < 0) {
		fprintf(stderr, "first message: %s\n",
			len == -ENODATA ? "connection closed" : strerror(-len));
		return 1;
	}
	why = sd_smb2_check_negotiate_request(msg, len);
	if (why) {
		fprintf(stderr, "first message (%ld bytes): %s\n", len, why);
		return 1;
	}
	printf("SMB2 NEGOTIATE request: %ld bytes, %u dialects:", len,
	       sd_le16(msg + SMB2_HEADER_SIZE + 2));
	for (i = 0; i < sd_le16(msg + SMB2_HEADER_SIZE + 2); i++)
		printf(" 0x%04x", sd_le16(msg + SMB2_HEADER_SIZE + 36 + 2 * i));
	printf("\n");

	/* The ERROR response: the request's header turned around, 9-byte body. */
	{
		unsigned char rsp[SMB2_HEADER_SIZE + 9] = { 0 };

		memcpy(rsp, msg, SMB2_HEADER_SIZE);
		sd_put32(rsp + 8, 0xC00000BB);	/* STATUS_NOT_SUPPORTED */
		sd_put16(rsp + 14, 1);		/* CreditResponse */
		sd_put32(rsp + 16, SMB2_FLAGS_SERVER_TO_REDIR);
		sd_put32(rsp + 20, 0);		/* NextCommand */
		memset(rsp + 48, 0, 16);	/* Signature */
		sd_put16(rsp + SMB2_HEADER_SIZE, 9);	/* StructureSize */
		r = sd_stream_send(fd, rsp, sizeof(rsp));
		if (r) {
			fprintf(stderr, "ERROR response: %s\n", strerror(-r));
			return 1;
		}
	}
	/* cifs.ko gives up the connection: EOF or an error within the timeout. */
	len = sd_stream_recv(fd, msg, 1 << 20);
	if (len >= 0)
		printf("after the ERROR response: another message, %ld bytes\n", len);
	else
		printf("after the ERROR response: %s\n",
		       len == -ENODATA ? "cifs.ko disconnected" : strerror(-len));
	close(fd);
	free(msg);
	return 0;
}
