// SPDX-License-Identifier: GPL-2.0
/*
 * interop_ksmbd_client ADDR PORT
 *
 * An AF_SMBDIRECT SOCK_STREAM client of ksmbd: connects to ADDR:PORT
 * (ksmbd listens on 445 for InfiniBand/RoCE devices and 5445 for iWARP),
 * prints the negotiated SMB-Direct parameters, sends an SMB2 NEGOTIATE
 * request it builds itself (4-byte big-endian length prefix, as over TCP)
 * and checks that the answer is a successful SMB2 NEGOTIATE response for
 * one of the offered dialects. Exit 0 only then; otherwise one line on
 * stderr says which step failed and why. Every step has a deadline.
 */
#include "sd_test.h"
#include "sd_smb2.h"

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "interop_ksmbd_client: timed out\n");
	_exit(3);
}

int main(int argc, char **argv)
{
	static const uint16_t dialects[] = { 0x0202, 0x0210, 0x0300, 0x0302 };
	const int ndialects = sizeof(dialects) / sizeof(dialects[0]);
	struct sd_target t = { .kind = "", .netdev = "" };
	unsigned char req[256], *resp;
	struct smbdirect_params p;
	const char *why;
	uint16_t dialect = 0;
	size_t len;
	long n;
	int fd, r;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(60);
	t.addr = argv[1];
	t.af = strchr(argv[1], ':') ? AF_INET6 : AF_INET;
	/* SD_INET=1: socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT). */
	t.inet = getenv("SD_INET") && !strcmp(getenv("SD_INET"), "1");
	sd_use_entry(&t);

	fd = sd_socket(SOCK_STREAM);
	if (fd < 0) {
		fprintf(stderr, "socket: %s\n", fd == -ENOENT ? "af_smbdirect is not loaded" :
			strerror(-fd));
		return 1;
	}
	{
		struct sockaddr_storage ss;
		socklen_t sl = sd_addr(&t, atoi(argv[2]), &ss);

		if (connect(fd, (struct sockaddr *)&ss, sl)) {
			fprintf(stderr, "connect %s port %s: %s\n", argv[1], argv[2],
				strerror(errno));
			return 1;
		}
	}
	sd_set_timeouts(fd, 20000);
	{
		int dom = 0, proto = 0;
		socklen_t l = sizeof(int);

		getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l);
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
		printf("socket: SO_DOMAIN %d SO_PROTOCOL %d\n", dom, proto);
	}
	r = sd_get_params(fd, &p);
	if (r) {
		fprintf(stderr, "GET_PARAMS: %s\n", strerror(-r));
		return 1;
	}
	printf("negotiated: version 0x%x transport %u max_send_size %u max_receive_size %u "
	       "max_fragmented_send_size %u max_fragmented_receive_size %u "
	       "max_read_write_size %u send_credit_target %u receive_credit_max %u "
	       "initiator_depth %u responder_resources %u keepalive_interval %u\n",
	       p.version, p.transport, p.max_send_size, p.max_receive_size,
	       p.max_fragmented_send_size, p.max_fragmented_receive_size,
	       p.max_read_write_size, p.send_credit_target, p.receive_credit_max,
	       p.initiator_depth, p.responder_resources, p.keepalive_interval);
	if (p.version != 0x100) {
		fprintf(stderr, "GET_PARAMS: version 0x%x, not 0x100\n", p.version);
		return 1;
	}
	if (sd_check_rd_depths(&p))
		return 1;

	len = sd_smb2_negotiate_request(req, dialects, ndialects);
	r = sd_stream_send(fd, req, len);
	if (r) {
		fprintf(stderr, "send NEGOTIATE: %s\n", strerror(-r));
		return 1;
	}
	resp = malloc(1 << 20);
	n = sd_stream_recv(fd, resp, 1 << 20);
	if (n < 0) {
		fprintf(stderr, "receive NEGOTIATE response: %s\n",
			n == -ENODATA ? "connection closed" : strerror(-n));
		return 1;
	}
	why = sd_smb2_check_negotiate_response(resp, n, dialects, ndialects, &dialect);
	if (why) {
		fprintf(stderr, "NEGOTIATE response (%ld bytes): %s\n", n, why);
		return 1;
	}
	printf("SMB2 NEGOTIATE response: %ld bytes, dialect 0x%04x, security mode 0x%x, "
	       "max transact %u read %u write %u\n", n, dialect,
	       sd_le16(resp + SMB2_HEADER_SIZE + 2), sd_le32(resp + SMB2_HEADER_SIZE + 28),
	       sd_le32(resp + SMB2_HEADER_SIZE + 32), sd_le32(resp + SMB2_HEADER_SIZE + 36));
	close(fd);
	free(resp);
	return 0;
}
