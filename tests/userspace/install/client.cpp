// SPDX-License-Identifier: GPL-2.0
// The install test's C++ program: built against the installed tree only.
// Connects, sends "ping", prints the answer and the negotiated parameters.
#include <smbdirect/smbdirect.hpp>

#include <cstdio>

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
		return 2;
	}
	auto s = sd::connect(argv[1], argv[2], SOCK_SEQPACKET);
	if (!s) {
		std::fprintf(stderr, "connect to %s port %s: %s\n", argv[1], argv[2],
			     s.error().message().c_str());
		return 1;
	}
	const char ping[] = "ping";
	std::byte buf[64];
	auto sent = s->send(std::as_bytes(std::span(ping, 4)));
	auto got = sent ? s->recv(buf) : sent;
	auto p = s->params();
	if (!got || !p) {
		std::fprintf(stderr, "client: %s\n",
			     (!got ? got.error() : p.error()).message().c_str());
		return 1;
	}
	std::printf("client got \"%.*s\" over %s: max_fragmented_send_size %u, send credits %u\n",
		    static_cast<int>(*got), reinterpret_cast<const char *>(buf),
		    smbdirect_transport_name(p->transport), p->max_fragmented_send_size,
		    p->send_credit_target);
	return 0;
}
