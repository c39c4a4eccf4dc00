// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect-example-smb2-client: an SMB2 client on libsmbdirect that moves
 * READ/WRITE data with the SMB-Direct RDMA channel. See
 * Documentation/smb2-rdma-offload.rst for the walkthrough.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include <smbdirect/smbdirect.h>

#include "client.hpp"
#include "page_buffer.hpp"
#include "pipeline.hpp"
#include "errors.hpp"
#include "selftest.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_error = 1;
constexpr int exit_usage = 2;
constexpr const char *prog = "smbdirect-example-smb2-client";

const char usage_text[] =
	"Usage: smbdirect-example-smb2-client [OPTIONS] ADDR PORT //SERVER/SHARE COMMAND [ARGS]\n"
	"\n"
	"An SMB2 client over an SMB-Direct socket (libsmbdirect) that can move READ and\n"
	"WRITE data with the RDMA channel: the server RDMA-reads and RDMA-writes buffers\n"
	"the client registered.\n"
	"\n"
	"Commands:\n"
	"  info                 negotiate, authenticate, connect the share, print what was agreed\n"
	"  put LOCAL REMOTE     copy a local file to the share\n"
	"  get REMOTE LOCAL     copy a file of the share to a local file\n"
	"  selftest             WRITE and READ over the RDMA channel in every size and layout,\n"
	"                       checked against the share's directory (--local-dir)\n"
	"  list-cases           the selftest's case names (ADDR PORT SHARE not needed)\n"
	"  rdma-errors          READ/WRITE with SMB2_CHANNEL_RDMA_V1_INVALIDATE that the server\n"
	"                       refuses, alone and in compound chains: each buffer must come\n"
	"                       back invalidated by the server and the connection stay up\n"
	"  identity-writes N    RDMA WRITE 1 MiB into each of the files sd-identity-0..N-1,\n"
	"                       each followed at once by an SMB2 CANCEL (which the server\n"
	"                       runs as root): the server must write as the session's user\n"
	"  no-stall N           N READs of 1 MiB over the RDMA channel back to back, then an\n"
	"                       ECHO: a server short of RDMA slots must answer the ECHO\n"
	"                       before the last READ (it must not wait in its event loop)\n"
	"  no-stall-holes N     no-stall on a sparse file: the READs are of its holes\n"
	"\n"
	"Options:\n"
	"  -u, --user USER        user name for NTLMv2 (default: empty)\n"
	"  -p, --password PASS    password (default: $SMB2_PASSWORD, else empty)\n"
	"  -d, --domain DOMAIN    domain (default: empty)\n"
	"  -D, --dialect D        3.0.2 or 3.1.1 (default: 3.1.1)\n"
	"      --rdma             put/get: move the data with SMB2_CHANNEL_RDMA_V1\n"
	"      --invalidate       with --rdma: SMB2_CHANNEL_RDMA_V1_INVALIDATE\n"
	"      --io-size N        put/get: bytes per READ/WRITE (K/M suffixes; default: the\n"
	"                         negotiated maximum for the channel)\n"
	"      --depth N          put/get --rdma: keep up to N READ/WRITE requests outstanding\n"
	"                         (1..64, default 1: one at a time), each with a buffer of\n"
	"                         its own, deregistered asynchronously after its response\n"
	"      --segments N       put/get --rdma: split each buffer into N iovec segments,\n"
	"                         which become N buffer descriptors\n"
	"      --round-up         get: every READ asks for --io-size bytes, also at the\n"
	"                         end of the file (as clients that round up do)\n"
	"      --local-dir DIR    selftest: the share's directory on this machine\n"
	"      --filter A,B       selftest, list-cases: only cases whose name contains A or B\n"
	"      --past-end-segments N  selftest: READ past the end of a file with N\n"
	"                         descriptors (default 1)\n"
	"      --tcp              SMB over TCP instead of SMB-Direct (no RDMA channel)\n"
	"      --sign             require signing: every request of the session signed with\n"
	"                         AES-128-CMAC, every response's signature checked\n"
	"      --bind-from-tcp TCPPORT  info, put, get: establish the session over TCP to ADDR\n"
	"                         TCPPORT first (signed, tree connected), then bind the\n"
	"                         connection to ADDR PORT to it as a second channel\n"
	"                         (SMB2_SESSION_FLAG_BINDING, the same ClientGuid) and run\n"
	"                         COMMAND there; the TCP connection stays open to the end\n"
	"      --bind-signature S with --bind-from-tcp, for tests: sign the binding\n"
	"                         SESSION_SETUPs 'valid' (default), 'none' or 'wrong'\n"
	"      --json             info, put, get, selftest: print JSON\n"
	"  -v, --verbose          every SMB2 exchange on stderr\n"
	"  -h, --help             this help\n"
	"\n"
	"Exit status: 0 success, 1 runtime error (or a failed selftest case), 2 usage.\n";

struct Options {
	smb2::ClientConfig config;
	bool rdma = false;
	bool invalidate = false;
	uint64_t io_size = 0;
	int segments = 1;
	uint32_t depth = 1;
	bool round_up = false;
	int past_end_segments = 1;
	std::string local_dir;
	std::string filter;
	bool tcp = false;
	bool json = false;
	std::string bind_from_tcp; /* the TCP port of the session's first channel */
	/* Set once the session is bound: start_session() has nothing left to do. */
	bool bound = false;
};

int usage_error(const std::string &message)
{
	std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, message.c_str(), prog);
	return exit_usage;
}

int runtime_error(const std::string &object, std::error_code ec)
{
	std::fprintf(stderr, "%s: %s: %s\n", prog, object.c_str(), ec.message().c_str());
	return exit_error;
}

bool parse_size(const char *s, uint64_t &out)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = std::strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	uint64_t mult = 1;
	if (*end == 'K' || *end == 'k')
		mult = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mult = 1024 * 1024, end++;
	if (*end)
		return false;
	out = v * mult;
	return v == out / mult;
}

/* A connected stream socket to ADDR PORT: SMB-Direct, or TCP with --tcp. */
int connect_to(const std::string &host, const std::string &port, bool tcp)
{
	sockaddr_storage ss{};
	socklen_t len = 0;
	int err = smbdirect_parse_address(host.c_str(), port.c_str(), &ss, &len);
	if (err < 0) {
		std::fprintf(stderr, "%s: %s %s: %s\n", prog, host.c_str(), port.c_str(),
			     std::strerror(-err));
		return -1;
	}
	if (tcp) {
		int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&ss), len) < 0) {
			std::fprintf(stderr, "%s: tcp %s %s: %s\n", prog, host.c_str(),
				     port.c_str(), std::strerror(errno));
			if (fd >= 0)
				::close(fd);
			return -1;
		}
		return fd;
	}
	char why[256];
	if (smbdirect_available(why, sizeof(why)) < 0) {
		std::fprintf(stderr, "%s: %s\n", prog, why);
		return -1;
	}
	int fd = smbdirect_connect(reinterpret_cast<sockaddr *>(&ss), len, SOCK_STREAM,
				   SOCK_CLOEXEC);
	if (fd < 0) {
		std::fprintf(stderr, "%s: smbdirect %s %s: %s\n", prog, host.c_str(),
			     port.c_str(), std::strerror(-fd));
		return -1;
	}
	return fd;
}

int start_session(smb2::Client &client, const std::string &unc, const Options &o)
{
	if (o.bound)
		return exit_ok; /* bind_channel() did it all */
	if (auto ec = client.negotiate())
		return runtime_error("NEGOTIATE", ec);
	if (auto ec = client.session_setup())
		return runtime_error("SESSION_SETUP", ec);
	if (auto ec = client.tree_connect(unc))
		return runtime_error("TREE_CONNECT " + unc, ec);
	return exit_ok;
}

const char *transport_of(const smb2::Client &c)
{
	return c.transport() ? smbdirect_transport_name(c.transport()->transport) : "tcp";
}

/* --bind-from-tcp, first: the session and its tree over TCP (signed). */
int start_primary(smb2::Client &primary, const std::string &unc)
{
	if (auto ec = primary.negotiate())
		return runtime_error("NEGOTIATE (tcp)", ec);
	if (auto ec = primary.session_setup())
		return runtime_error("SESSION_SETUP (tcp)", ec);
	if (auto ec = primary.tree_connect(unc))
		return runtime_error("TREE_CONNECT (tcp) " + unc, ec);
	return exit_ok;
}

/*
 * Then this connection NEGOTIATEs with the same ClientGuid and dialect and
 * binds to the session. primary stays connected: the session is the one it
 * established.
 */
int bind_channel(smb2::Client &primary, smb2::Client &channel, const std::string &port,
		 const std::string &tcp_port, Options &o)
{
	if (auto ec = channel.negotiate())
		return runtime_error("NEGOTIATE (channel)", ec);
	if (auto ec = channel.bind_session(primary))
		return runtime_error("SESSION_SETUP (binding)", ec);
	o.bound = true;
	if (o.json)
		std::printf("{\"command\": \"bind\", \"dialect\": \"%s\", \"session_id\": \"0x%llx\", "
			    "\"channels\": [{\"transport\": \"%s\", \"port\": %s, \"signed\": %s}, "
			    "{\"transport\": \"%s\", \"port\": %s, \"signed\": %s, \"bound\": %s}]}\n",
			    smb2::dialect_name(channel.negotiated().dialect).c_str(),
			    static_cast<unsigned long long>(channel.session_id()), transport_of(primary),
			    tcp_port.c_str(), primary.signs() ? "true" : "false", transport_of(channel),
			    port.c_str(), channel.signs() ? "true" : "false",
			    channel.bound_channel() ? "true" : "false");
	else
		std::printf("session 0x%llx: channel 1 %s port %s, channel 2 %s port %s (bound, "
			    "signed)\n",
			    static_cast<unsigned long long>(channel.session_id()), transport_of(primary),
			    tcp_port.c_str(), transport_of(channel), port.c_str());
	std::fflush(stdout);
	return exit_ok;
}

int end_session(smb2::Client &client)
{
	if (auto ec = client.tree_disconnect())
		return runtime_error("TREE_DISCONNECT", ec);
	if (auto ec = client.logoff())
		return runtime_error("LOGOFF", ec);
	return exit_ok;
}

int cmd_info(smb2::Client &client, const std::string &unc, const Options &o)
{
	if (int rc = start_session(client, unc, o))
		return rc;
	const auto &n = client.negotiated();
	const auto &t = client.transport();
	if (o.json) {
		std::printf("{\"dialect\": \"%s\", \"max_transact_size\": %u, \"max_read_size\": %u, "
			    "\"max_write_size\": %u, \"session_flags\": %u, \"credits\": %u, "
			    "\"smbdirect\": %s, \"max_rdma_read\": %u, \"max_rdma_write\": %u, "
			    "\"max_inline_read\": %u, \"max_inline_write\": %u}\n",
			    smb2::dialect_name(n.dialect).c_str(), n.max_transact_size,
			    n.max_read_size, n.max_write_size, client.session_flags(),
			    client.credits(), t ? "true" : "false", client.max_rdma_read(),
			    client.max_rdma_write(), client.max_inline_read(),
			    client.max_inline_write());
	} else {
		std::printf("dialect %s\n", smb2::dialect_name(n.dialect).c_str());
		std::printf("MaxTransactSize %u MaxReadSize %u MaxWriteSize %u\n",
			    n.max_transact_size, n.max_read_size, n.max_write_size);
		std::printf("SessionFlags 0x%x%s credits %u\n", client.session_flags(),
			    client.session_flags() & smb2::session_flag_is_guest ? " (guest)" : "",
			    client.credits());
		if (t)
			std::printf("smbdirect %s max_send_size %u max_fragmented_send_size %u "
				    "max_read_write_size %u initiator_depth %u\n",
				    smbdirect_transport_name(t->transport), t->max_send_size,
				    t->max_fragmented_send_size, t->max_read_write_size,
				    t->initiator_depth);
		std::printf("per READ/WRITE: inline %u/%u bytes, RDMA channel %u/%u bytes\n",
			    client.max_inline_read(), client.max_inline_write(),
			    client.max_rdma_read(), client.max_rdma_write());
		if (n.dialect == smb2::dialect_311)
			std::printf("preauth integrity hash %s\n",
				    smb2::to_hex(client.preauth().value()).c_str());
	}
	return end_session(client);
}

struct Transfer {
	uint64_t bytes = 0;
	uint64_t requests = 0;
	uint32_t descriptors = 0;
	uint64_t remote_invalidations = 0;
	uint32_t depth = 1;
	uint32_t max_outstanding = 1;
};

void print_transfer(const char *what, const Transfer &t, double seconds, smb2::Channel channel,
		    bool json)
{
	double mib_s = seconds > 0 ? static_cast<double>(t.bytes) / seconds / 1048576.0 : 0;
	if (json)
		std::printf("{\"command\": \"%s\", \"bytes\": %llu, \"requests\": %llu, "
			    "\"channel\": \"%s\", \"descriptors_max\": %u, "
			    "\"remote_invalidations\": %llu, \"depth\": %u, "
			    "\"max_outstanding\": %u, \"seconds\": %.6f, \"mib_per_s\": %.1f}\n",
			    what, static_cast<unsigned long long>(t.bytes),
			    static_cast<unsigned long long>(t.requests), smb2::channel_name(channel),
			    t.descriptors, static_cast<unsigned long long>(t.remote_invalidations),
			    t.depth, t.max_outstanding, seconds, mib_s);
	else
		std::printf("%s: %llu bytes in %llu requests over %s in %.3f s (%.1f MiB/s)%s\n",
			    what, static_cast<unsigned long long>(t.bytes),
			    static_cast<unsigned long long>(t.requests), smb2::channel_name(channel),
			    seconds, mib_s,
			    t.depth > 1 ? (", up to " + std::to_string(t.max_outstanding) +
					   " outstanding")
						  .c_str()
					: "");
}

/* put/get over the RDMA channel: the pipeline, at --depth. */
smb2::PipelineConfig pipeline_config(const Options &o, uint64_t io)
{
	smb2::PipelineConfig pc;
	pc.depth = o.depth;
	pc.io_size = io;
	pc.channel = o.invalidate ? smb2::Channel::rdma_v1_invalidate : smb2::Channel::rdma_v1;
	pc.segments = o.segments;
	pc.round_up = o.round_up;
	return pc;
}

void take_stats(Transfer &t, const smb2::PipelineStats &s, uint32_t depth)
{
	t.bytes = s.bytes;
	t.requests = s.requests;
	t.descriptors = s.descriptors;
	t.remote_invalidations = s.remote_invalidations;
	t.depth = depth;
	t.max_outstanding = s.max_outstanding;
}

smb2::Channel channel_of(const Options &o)
{
	if (!o.rdma)
		return smb2::Channel::none;
	return o.invalidate ? smb2::Channel::rdma_v1_invalidate : smb2::Channel::rdma_v1;
}

int cmd_put(smb2::Client &client, const std::string &unc, const std::string &local,
	    const std::string &remote, const Options &o)
{
	int in = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return runtime_error(local, { errno, std::system_category() });
	if (int rc = start_session(client, unc, o)) {
		::close(in);
		return rc;
	}
	auto file = client.create(remote, smb2::generic_write | smb2::generic_read,
				  smb2::disposition_overwrite_if);
	if (!file) {
		::close(in);
		return runtime_error("CREATE " + remote, file.error());
	}
	uint64_t io = o.rdma ? client.max_rdma_write() : client.max_inline_write();
	if (o.io_size)
		io = std::min<uint64_t>(io, o.io_size);
	smb2::PageBuffer buf(o.rdma ? 1 : io); /* the RDMA pipeline has its own */
	if (!buf.ok()) {
		::close(in);
		return runtime_error("buffer", std::make_error_code(std::errc::not_enough_memory));
	}
	Transfer t;
	auto t0 = std::chrono::steady_clock::now();
	int rc = exit_ok;
	if (o.rdma) {
		auto s = smb2::put_pipelined(client, file->id, in, pipeline_config(o, io));
		if (s)
			take_stats(t, *s, o.depth);
		else
			rc = runtime_error("WRITE " + remote, s.error());
	}
	while (!o.rdma) {
		ssize_t n = ::read(in, buf.data(), io);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = runtime_error(local, { errno, std::system_category() });
			break;
		}
		if (n == 0)
			break;
		uint64_t done;
		{
			auto r = client.write(file->id, t.bytes,
					      { buf.data(), static_cast<size_t>(n) });
			if (!r) {
				rc = runtime_error("WRITE " + remote, r.error());
				break;
			}
			done = *r;
		}
		t.requests++;
		t.bytes += done;
		if (done != static_cast<uint64_t>(n)) {
			rc = runtime_error("WRITE " + remote, std::make_error_code(std::errc::io_error));
			break;
		}
	}
	double seconds =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	::close(in);
	if (auto ec = client.close(file->id); ec && rc == exit_ok)
		rc = runtime_error("CLOSE " + remote, ec);
	if (rc == exit_ok) {
		print_transfer("put", t, seconds, channel_of(o), o.json);
		rc = end_session(client);
	}
	return rc;
}

int cmd_get(smb2::Client &client, const std::string &unc, const std::string &remote,
	    const std::string &local, const Options &o)
{
	if (int rc = start_session(client, unc, o))
		return rc;
	auto file = client.create(remote, smb2::generic_read, smb2::disposition_open);
	if (!file)
		return runtime_error("CREATE " + remote, file.error());
	int out = ::open(local.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		auto ec = std::error_code(errno, std::system_category());
		(void)client.close(file->id);
		return runtime_error(local, ec);
	}
	uint64_t io = o.rdma ? client.max_rdma_read() : client.max_inline_read();
	if (o.io_size)
		io = std::min<uint64_t>(io, o.io_size);
	smb2::PageBuffer buf(o.rdma ? 1 : io); /* the RDMA pipeline has its own */
	Transfer t;
	int rc = buf.ok() ? exit_ok
			  : runtime_error("buffer", std::make_error_code(std::errc::not_enough_memory));
	auto t0 = std::chrono::steady_clock::now();
	if (rc == exit_ok && o.rdma) {
		auto s = smb2::get_pipelined(client, file->id, file->end_of_file, out,
					     pipeline_config(o, io));
		if (s)
			take_stats(t, *s, o.depth);
		else
			rc = runtime_error("READ " + remote, s.error());
	}
	while (rc == exit_ok && !o.rdma && t.bytes < file->end_of_file) {
		size_t want = static_cast<size_t>(
			o.round_up ? io : std::min<uint64_t>(io, file->end_of_file - t.bytes));
		uint64_t got;
		{
			auto r = client.read(file->id, t.bytes, { buf.data(), want });
			if (!r) {
				rc = runtime_error("READ " + remote, r.error());
				break;
			}
			got = *r;
		}
		t.requests++;
		if (got == 0)
			break; /* the file shrank */
		for (size_t done = 0; done < got;) {
			ssize_t n = ::write(out, buf.data() + done, got - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = runtime_error(local, { errno, std::system_category() });
				break;
			}
			done += static_cast<size_t>(n);
		}
		t.bytes += got;
		if (got < want)
			break; /* the end of the file */
	}
	double seconds =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (::close(out) && rc == exit_ok)
		rc = runtime_error(local, { errno, std::system_category() });
	if (auto ec = client.close(file->id); ec && rc == exit_ok)
		rc = runtime_error("CLOSE " + remote, ec);
	if (rc == exit_ok) {
		print_transfer("get", t, seconds, channel_of(o), o.json);
		rc = end_session(client);
	}
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	enum { opt_rdma = 256, opt_invalidate, opt_io_size, opt_segments, opt_round_up,
	       opt_local_dir, opt_filter, opt_past_end_segments, opt_tcp, opt_json, opt_depth,
	       opt_sign, opt_bind_from_tcp, opt_bind_signature };
	static const option long_options[] = {
		{ "user", required_argument, nullptr, 'u' },
		{ "password", required_argument, nullptr, 'p' },
		{ "domain", required_argument, nullptr, 'd' },
		{ "dialect", required_argument, nullptr, 'D' },
		{ "rdma", no_argument, nullptr, opt_rdma },
		{ "invalidate", no_argument, nullptr, opt_invalidate },
		{ "io-size", required_argument, nullptr, opt_io_size },
		{ "segments", required_argument, nullptr, opt_segments },
		{ "depth", required_argument, nullptr, opt_depth },
		{ "round-up", no_argument, nullptr, opt_round_up },
		{ "local-dir", required_argument, nullptr, opt_local_dir },
		{ "filter", required_argument, nullptr, opt_filter },
		{ "past-end-segments", required_argument, nullptr, opt_past_end_segments },
		{ "tcp", no_argument, nullptr, opt_tcp },
		{ "json", no_argument, nullptr, opt_json },
		{ "sign", no_argument, nullptr, opt_sign },
		{ "bind-from-tcp", required_argument, nullptr, opt_bind_from_tcp },
		{ "bind-signature", required_argument, nullptr, opt_bind_signature },
		{ "verbose", no_argument, nullptr, 'v' },
		{ "help", no_argument, nullptr, 'h' },
		{},
	};
	Options o;
	if (const char *pw = std::getenv("SMB2_PASSWORD"))
		o.config.credentials.password = pw;
	o.config.credentials.workstation = "SMBDIRECT-EXAMPLE";
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "u:p:d:D:vh", long_options, nullptr)) != -1) {
		switch (c) {
		case 'u':
			o.config.credentials.user = optarg;
			break;
		case 'p':
			o.config.credentials.password = optarg;
			break;
		case 'd':
			o.config.credentials.domain = optarg;
			break;
		case 'D':
			if (std::strcmp(optarg, "3.0.2") == 0)
				o.config.dialect = smb2::dialect_302;
			else if (std::strcmp(optarg, "3.1.1") == 0)
				o.config.dialect = smb2::dialect_311;
			else
				return usage_error(std::string("dialect ") + optarg +
						   ": must be 3.0.2 or 3.1.1");
			break;
		case opt_rdma:
			o.rdma = true;
			break;
		case opt_invalidate:
			o.invalidate = true;
			break;
		case opt_io_size:
			if (!parse_size(optarg, o.io_size) || o.io_size == 0)
				return usage_error(std::string("io-size ") + optarg +
						   ": not a positive size");
			break;
		case opt_segments: {
			uint64_t n = 0;
			if (!parse_size(optarg, n) || n == 0 || n > SMBDIRECT_IOV_MAX)
				return usage_error(std::string("segments ") + optarg +
						   ": must be 1.." +
						   std::to_string(SMBDIRECT_IOV_MAX));
			o.segments = static_cast<int>(n);
			break;
		}
		case opt_depth: {
			uint64_t n = 0;
			if (!parse_size(optarg, n) || n == 0 || n > 64)
				return usage_error(std::string("depth ") + optarg + ": must be 1..64");
			o.depth = static_cast<uint32_t>(n);
			break;
		}
		case opt_round_up:
			o.round_up = true;
			break;
		case opt_local_dir:
			o.local_dir = optarg;
			break;
		case opt_filter:
			o.filter = optarg;
			break;
		case opt_past_end_segments: {
			uint64_t n = 0;
			if (!parse_size(optarg, n) || n == 0 || n > 16)
				return usage_error(std::string("past-end-segments ") + optarg +
						   ": must be 1..16");
			o.past_end_segments = static_cast<int>(n);
			break;
		}
		case opt_tcp:
			o.tcp = true;
			break;
		case opt_json:
			o.json = true;
			break;
		case opt_sign:
			o.config.sign = true;
			break;
		case opt_bind_from_tcp:
			o.bind_from_tcp = optarg;
			break;
		case opt_bind_signature:
			if (std::strcmp(optarg, "valid") == 0)
				o.config.binding_signature = smb2::BindingSignature::valid;
			else if (std::strcmp(optarg, "none") == 0)
				o.config.binding_signature = smb2::BindingSignature::none;
			else if (std::strcmp(optarg, "wrong") == 0)
				o.config.binding_signature = smb2::BindingSignature::wrong;
			else
				return usage_error(std::string("bind-signature ") + optarg +
						   ": must be valid, none or wrong");
			break;
		case 'v':
			o.config.verbose = true;
			break;
		case 'h':
			std::fputs(usage_text, stdout);
			return exit_ok;
		default:
			return usage_error(std::string("unknown option '") + argv[optind - 1] + "'");
		}
	}
	std::vector<std::string> args(argv + optind, argv + argc);
	if (args.size() == 1 && args[0] == "list-cases") {
		for (const auto &n : smb2::selftest_case_names())
			if (smb2::selftest_case_wanted(o.filter, n))
				std::printf("%s\n", n.c_str());
		return exit_ok;
	}
	if (args.size() < 4)
		return usage_error("expected ADDR PORT //SERVER/SHARE COMMAND");
	const std::string &cmd = args[3];
	const bool nostall = cmd == "no-stall" || cmd == "no-stall-holes";
	size_t want = cmd == "put" || cmd == "get"		     ? 6
		      : cmd == "identity-writes" || nostall ? 5
								     : 4;
	if (cmd != "info" && cmd != "put" && cmd != "get" && cmd != "selftest" &&
	    cmd != "rdma-errors" && cmd != "identity-writes" && !nostall)
		return usage_error("unknown command '" + cmd + "'");
	if (args.size() != want)
		return usage_error(cmd + ": wrong number of arguments");
	if (o.invalidate && !o.rdma)
		return usage_error("--invalidate needs --rdma");
	if (o.rdma && o.tcp)
		return usage_error("--rdma needs SMB-Direct, not --tcp");
	if (o.depth > 1 && !o.rdma)
		return usage_error("--depth needs --rdma");
	if (cmd == "selftest" && o.local_dir.empty())
		return usage_error("selftest needs --local-dir");
	if ((cmd == "rdma-errors" || cmd == "identity-writes" || nostall) && o.tcp)
		return usage_error(cmd + " needs SMB-Direct");
	if (!o.bind_from_tcp.empty() &&
	    (cmd == "selftest" || cmd == "rdma-errors" || cmd == "identity-writes" ||
	     nostall))
		return usage_error("--bind-from-tcp: info, put or get");
	if (!o.bind_from_tcp.empty() && o.config.dialect < smb2::dialect_300)
		return usage_error("--bind-from-tcp needs SMB 3");

	const std::string &unc = args[2];
	/* --bind-from-tcp: the session's first channel, open until we return. */
	std::optional<smb2::Client> primary;
	if (!o.bind_from_tcp.empty()) {
		std::array<uint8_t, 16> guid;
		if (auto ec = smb2::ntlm::random_bytes(guid))
			return runtime_error("ClientGuid", ec);
		o.config.client_guid = guid;
		o.config.multi_channel = true;
		smb2::ClientConfig first = o.config;
		/* Samba signs every request of a session with more than one channel. */
		first.sign = true;
		first.binding_signature = smb2::BindingSignature::valid;
		int tfd = connect_to(args[0], o.bind_from_tcp, true);
		if (tfd < 0)
			return exit_error;
		primary.emplace(tfd, first);
		if (int rc = start_primary(*primary, unc))
			return rc;
	}
	int fd = connect_to(args[0], args[1], o.tcp);
	if (fd < 0)
		return exit_error;
	smb2::Client client(fd, o.config);
	if (o.rdma && !client.transport())
		return runtime_error("GET_PARAMS", std::make_error_code(std::errc::not_supported));
	if (primary) {
		if (int rc = bind_channel(*primary, client, args[1], o.bind_from_tcp, o))
			return rc;
	}
	if (cmd == "info")
		return cmd_info(client, unc, o);
	if (cmd == "put")
		return cmd_put(client, unc, args[4], args[5], o);
	if (cmd == "get")
		return cmd_get(client, unc, args[4], args[5], o);
	if (cmd == "identity-writes") {
		smb2::SelftestOptions so;
		so.unc = unc;
		int n = std::atoi(args[4].c_str());
		if (n < 1 || n > 64)
			return usage_error("identity-writes: 1..64 files");
		return smb2::run_identity_writes(client, so, stdout, n) ? exit_error : exit_ok;
	}
	if (nostall) {
		smb2::SelftestOptions so;
		so.unc = unc;
		int n = std::atoi(args[4].c_str());
		if (n < 2 || n > 64)
			return usage_error(cmd + ": 2..64 READs");
		return smb2::run_no_stall(client, so, stdout, n, cmd == "no-stall-holes") ? exit_error
											   : exit_ok;
	}
	if (cmd == "rdma-errors") {
		smb2::SelftestOptions so;
		so.unc = unc;
		so.filter = o.filter;
		return smb2::run_rdma_errors(client, so, stdout) ? exit_error : exit_ok;
	}
	smb2::SelftestOptions so;
	so.unc = unc;
	so.local_dir = o.local_dir;
	so.json = o.json;
	so.filter = o.filter;
	so.past_end_segments = o.past_end_segments;
	return smb2::run_selftest(client, so, stdout) ? exit_error : exit_ok;
}
