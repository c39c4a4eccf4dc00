// SPDX-License-Identifier: GPL-2.0
//
// The example client's protocol flow against a scripted server on a
// socketpair (no RDMA: GET_PARAMS fails there, as over TCP): a whole
// NEGOTIATE / NTLMv2 SESSION_SETUP / TREE_CONNECT checked from the server's
// side, and the client's reaction to responses that are wrong, truncated
// or hostile.
#include <gtest/gtest.h>

#include <functional>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "smb2-client/client.hpp"
#include "smb2/framing.hpp"

using namespace smb2;

namespace {

using Body = std::function<void(Writer &)>;

struct Request {
	Header header;
	Bytes bytes;
};

Request receive(int fd)
{
	auto m = read_message(fd, max_message_size);
	EXPECT_TRUE(m) << m.error().message();
	if (!m)
		return {};
	auto h = decode_header(*m);
	EXPECT_TRUE(h);
	return { h ? *h : Header{}, std::move(*m) };
}

Bytes response_to(const Header &req, uint32_t status, const Body &body, uint16_t credits = 64)
{
	Header h;
	h.command = req.command;
	h.message_id = req.message_id;
	h.session_id = req.session_id;
	h.tree_id = req.tree_id;
	h.flags = flag_server_to_redir;
	h.status = status;
	h.credits = credits;
	Writer w;
	encode_header(w, h);
	body(w);
	return w.take();
}

void send(int fd, const Bytes &m)
{
	EXPECT_FALSE(write_message(fd, m));
}

NegotiateResponse negotiate_response(uint16_t dialect, bool preauth = true)
{
	NegotiateResponse r;
	r.dialect = dialect;
	r.security_mode = signing_enabled;
	r.max_read_size = r.max_write_size = r.max_transact_size = 1 << 20;
	if (dialect == dialect_311 && preauth)
		r.contexts = { encode_preauth_context({ { hash_sha512 }, Bytes(32, 7) }) };
	return r;
}

/* A client on one end of a socketpair, a script on the other. */
class ScriptedPeer {
public:
	explicit ScriptedPeer(uint16_t dialect = dialect_311)
	{
		int fds[2];
		EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
		server_fd_ = fds[1];
		ClientConfig config;
		config.dialect = dialect;
		config.credentials = { "User", "Password", "Domain", "WS" };
		client_ = std::make_unique<Client>(fds[0], config);
	}
	~ScriptedPeer()
	{
		finish();
		::close(server_fd_);
	}
	void script(std::function<void(int)> f)
	{
		thread_ = std::thread(std::move(f), server_fd_);
	}
	/*
	 * Ends the conversation and joins the script (its EXPECTs have run);
	 * a script still waiting for a request the client never sent (the
	 * client failed early) sees the end of the stream instead of hanging.
	 */
	void finish()
	{
		::shutdown(client_->fd(), SHUT_RDWR);
		if (thread_.joinable())
			thread_.join();
	}
	Client &client()
	{
		return *client_;
	}

private:
	int server_fd_ = -1;
	std::unique_ptr<Client> client_;
	std::thread thread_;
};

/* The NEGOTIATE answer, the first step of every scripted session. */
void answer_negotiate(int fd, uint16_t dialect, PreauthHash *preauth = nullptr)
{
	Request q = receive(fd);
	EXPECT_EQ(q.header.command, Command::negotiate);
	Bytes r = response_to(q.header, 0, [&](Writer &w) {
		encode_negotiate_response(w, negotiate_response(dialect));
	});
	if (preauth) {
		preauth->update(q.bytes);
		preauth->update(r);
	}
	send(fd, r);
}

/* A NEGOTIATE answered with raw, possibly broken, bytes. */
std::error_code negotiate_against(const std::function<void(int, const Request &)> &answer)
{
	ScriptedPeer p;
	p.script([&](int fd) {
		Request q = receive(fd);
		answer(fd, q);
	});
	auto ec = p.client().negotiate();
	p.finish();
	return ec;
}

Bytes valid_negotiate_response(const Header &q)
{
	return response_to(q, 0, [](Writer &w) {
		encode_negotiate_response(w, negotiate_response(dialect_311));
	});
}

} // namespace

TEST(ExampleClient, WholeSessionSeenFromTheServer)
{
	ScriptedPeer p;
	PreauthHash server_preauth;
	p.script([&](int fd) {
		/* NEGOTIATE: 3.1.1 only, SHA-512 preauth with a 32-byte salt, no signing required. */
		Request q = receive(fd);
		auto neg = decode_negotiate_request(q.bytes);
		ASSERT_TRUE(neg);
		EXPECT_EQ(q.header.message_id, 0u);
		EXPECT_EQ(neg->dialects, std::vector<uint16_t>{ dialect_311 });
		EXPECT_EQ(neg->security_mode & signing_required, 0);
		EXPECT_EQ(neg->capabilities & cap_encryption, 0u);
		ASSERT_EQ(neg->contexts.size(), 1u);
		auto pre = decode_preauth_context(neg->contexts[0].data);
		ASSERT_TRUE(pre);
		EXPECT_EQ(pre->hash_algorithms, std::vector<uint16_t>{ hash_sha512 });
		EXPECT_EQ(pre->salt.size(), 32u);
		Bytes r = response_to(q.header, 0, [&](Writer &w) {
			encode_negotiate_response(w, negotiate_response(dialect_311));
		});
		server_preauth.update(q.bytes);
		server_preauth.update(r);
		send(fd, r);

		/* SESSION_SETUP 1: NTLMSSP NEGOTIATE without signing flags. */
		q = receive(fd);
		EXPECT_EQ(q.header.message_id, 1u);
		auto ss = decode_session_setup_request(q.bytes);
		ASSERT_TRUE(ss);
		auto nn = ntlm::decode_negotiate(ss->security_buffer);
		ASSERT_TRUE(nn);
		EXPECT_EQ(nn->flags & (ntlm::negotiate_sign | ntlm::negotiate_seal), 0u);
		ntlm::ChallengeMessage ch;
		ch.flags = ntlm::client_flags;
		ch.server_challenge = { 1, 2, 3, 4, 5, 6, 7, 8 };
		ch.target_name = "SRV";
		ch.target_info = ntlm::encode_av_pairs({ { ntlm::av_nb_computer_name, { 'S', 0 } } });
		auto chb = ntlm::encode_challenge(ch);
		ASSERT_TRUE(chb);
		Header h = q.header;
		h.session_id = 0x77;
		r = response_to(h, static_cast<uint32_t>(Status::more_processing_required),
				[&](Writer &w) { encode_session_setup_response(w, { 0, *chb }); });
		server_preauth.update(q.bytes);
		server_preauth.update(r);
		send(fd, r);

		/* SESSION_SETUP 2: a valid NTLMv2 AUTHENTICATE for User/Domain/Password. */
		q = receive(fd);
		EXPECT_EQ(q.header.message_id, 2u);
		EXPECT_EQ(q.header.session_id, 0x77u);
		ss = decode_session_setup_request(q.bytes);
		ASSERT_TRUE(ss);
		auto auth = ntlm::decode_authenticate(ss->security_buffer);
		ASSERT_TRUE(auth);
		EXPECT_EQ(auth->user, "User");
		EXPECT_EQ(auth->domain, "Domain");
		ASSERT_GT(auth->nt_challenge_response.size(), 16u);
		auto key = ntlm::ntowf_v2(auth->user, auth->domain, "Password");
		ByteView blob = ByteView(auth->nt_challenge_response).subspan(16);
		auto proof = ntlm::hmac_md5(*key, { ch.server_challenge, blob });
		EXPECT_EQ(to_hex(proof),
			  to_hex(ByteView(auth->nt_challenge_response).subspan(0, 16)));
		server_preauth.update(q.bytes);
		send(fd, response_to(q.header, 0, [](Writer &w) {
			     encode_session_setup_response(w, { 0, {} });
		     }));

		/* TREE_CONNECT with backslashes. */
		q = receive(fd);
		auto tc = decode_tree_connect_request(q.bytes);
		ASSERT_TRUE(tc);
		EXPECT_EQ(tc->path, "\\\\10.77.0.1\\share");
		h = q.header;
		h.tree_id = 9;
		send(fd, response_to(h, 0, [](Writer &w) { encode_tree_connect_response(w, {}); }));

		/* CREATE carries session and tree; CLOSE; TREE_DISCONNECT; LOGOFF. */
		q = receive(fd);
		EXPECT_EQ(q.header.tree_id, 9u);
		EXPECT_EQ(q.header.session_id, 0x77u);
		auto cr = decode_create_request(q.bytes);
		ASSERT_TRUE(cr);
		EXPECT_EQ(cr->name, "a\\b.bin");
		CreateResponse crr;
		crr.file_id = { 3, 4 };
		crr.end_of_file = 10;
		send(fd, response_to(q.header, 0, [&](Writer &w) { encode_create_response(w, crr); }));
		q = receive(fd);
		auto cl = decode_close_request(q.bytes);
		ASSERT_TRUE(cl);
		EXPECT_EQ(cl->file_id, (FileId{ 3, 4 }));
		send(fd, response_to(q.header, 0, [](Writer &w) { encode_close_response(w, {}); }));
		for (Command c : { Command::tree_disconnect, Command::logoff }) {
			q = receive(fd);
			EXPECT_EQ(q.header.command, c);
			send(fd, response_to(q.header, 0, [](Writer &w) { encode_empty(w); }));
		}
	});
	Client &c = p.client();
	EXPECT_FALSE(c.transport()); /* a socketpair has no GET_PARAMS */
	ASSERT_FALSE(c.negotiate());
	ASSERT_FALSE(c.session_setup());
	ASSERT_FALSE(c.tree_connect("//10.77.0.1/share"));
	auto f = c.create("a/b.bin", generic_read, disposition_open);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->end_of_file, 10u);
	EXPECT_FALSE(c.close(f->id));
	EXPECT_FALSE(c.tree_disconnect());
	EXPECT_FALSE(c.logoff());
	p.finish();
	/* Both sides hashed the same bytes: NEGOTIATE, both SESSION_SETUPs but the last response. */
	EXPECT_EQ(c.preauth().value(), server_preauth.value());
	/* Without an SMB-Direct socket there is no RDMA channel. */
	iovec v{ nullptr, 1 };
	auto w = c.write_rdma(f->id, 0, { &v, 1 }, Channel::rdma_v1);
	EXPECT_EQ(w.error(), std::errc::operation_not_supported);
}

TEST(ExampleClient, LogonFailureIsTheServersStatus)
{
	ScriptedPeer p(dialect_302);
	p.script([&](int fd) {
		answer_negotiate(fd, dialect_302);
		Request q = receive(fd);
		ntlm::ChallengeMessage ch;
		ch.flags = ntlm::client_flags;
		auto chb = ntlm::encode_challenge(ch);
		Header h = q.header;
		h.session_id = 5;
		send(fd, response_to(h, static_cast<uint32_t>(Status::more_processing_required),
				     [&](Writer &w) { encode_session_setup_response(w, { 0, *chb }); }));
		q = receive(fd);
		send(fd, response_to(q.header, static_cast<uint32_t>(Status::logon_failure),
				     [](Writer &w) { encode_error_response(w); }));
	});
	Client &c = p.client();
	ASSERT_FALSE(c.negotiate());
	EXPECT_EQ(c.session_setup(), Status::logon_failure);
	p.finish();
}

TEST(ExampleClient, Dialect302SendsNoContexts)
{
	ScriptedPeer p(dialect_302);
	p.script([&](int fd) {
		Request q = receive(fd);
		auto neg = decode_negotiate_request(q.bytes);
		ASSERT_TRUE(neg);
		EXPECT_EQ(neg->dialects, std::vector<uint16_t>{ dialect_302 });
		EXPECT_EQ(load_le16(&q.bytes[64 + 32]), 0); /* NegotiateContextCount */
		send(fd, response_to(q.header, 0, [](Writer &w) {
			     encode_negotiate_response(w, negotiate_response(dialect_302));
		     }));
	});
	EXPECT_FALSE(p.client().negotiate());
	p.finish();
	EXPECT_EQ(p.client().negotiated().dialect, dialect_302);
}

TEST(ExampleClient, HostileNegotiateResponses)
{
	/* Another message id. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  Header h = q.header;
			  h.message_id = 99;
			  send(fd, valid_negotiate_response(h));
		  }),
		  ParseError::unexpected_message);
	/* A request instead of a response (no SERVER_TO_REDIR). */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  Bytes b = valid_negotiate_response(q.header);
			  store_le32(&b[16], 0);
			  send(fd, b);
		  }),
		  ParseError::unexpected_message);
	/* The answer to another command. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  Header h = q.header;
			  h.command = Command::session_setup;
			  send(fd, valid_negotiate_response(h));
		  }),
		  ParseError::unexpected_message);
	/* A compounded response. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  Bytes b = valid_negotiate_response(q.header);
			  store_le32(&b[20], 64);
			  send(fd, b);
		  }),
		  ParseError::compound);
	/* Truncated inside the fixed body. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  Bytes b = valid_negotiate_response(q.header);
			  b.resize(100);
			  send(fd, b);
		  }),
		  ParseError::truncated);
	/* Not SMB2 at all. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &) { send(fd, Bytes(80, 0xFF)); }),
		  ParseError::bad_protocol_id);
	/* Shorter than a header. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &) { send(fd, Bytes(10, 0)); }),
		  ParseError::truncated);
	/* A dialect we did not offer. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  send(fd, response_to(q.header, 0, [](Writer &w) {
				       encode_negotiate_response(w, negotiate_response(dialect_302));
			       }));
		  }),
		  ParseError::bad_value);
	/* 3.1.1 without the preauth integrity context. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  send(fd, response_to(q.header, 0, [](Writer &w) {
				       encode_negotiate_response(w,
								 negotiate_response(dialect_311, false));
			       }));
		  }),
		  ParseError::bad_value);
	/* A length prefix far beyond any SMB2 message: nothing more is read. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &) {
			  uint8_t prefix[4] = { 0xFF, 0xFF, 0xFF, 0xFF };
			  EXPECT_EQ(::write(fd, prefix, 4), 4);
		  }),
		  ParseError::too_large);
	/* The server goes away between messages, and in the middle of one. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &) { ::shutdown(fd, SHUT_WR); }),
		  std::errc::not_connected);
	EXPECT_EQ(negotiate_against([](int fd, const Request &) {
			  uint8_t partial[6] = { 0, 0, 1, 0, 0xFE, 'S' };
			  EXPECT_EQ(::write(fd, partial, 6), 6);
			  ::shutdown(fd, SHUT_WR);
		  }),
		  std::errc::connection_aborted);
	/* An error status with a malformed error body is a parse error ... */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  send(fd, response_to(q.header, static_cast<uint32_t>(Status::not_supported),
					       [](Writer &w) { w.le16(9); }));
		  }),
		  ParseError::truncated);
	/* ... with a good one it is the server's status. */
	EXPECT_EQ(negotiate_against([](int fd, const Request &q) {
			  send(fd, response_to(q.header, static_cast<uint32_t>(Status::not_supported),
					       [](Writer &w) { encode_error_response(w); }));
		  }),
		  Status::not_supported);
}

TEST(ExampleClient, InterimResponseIsSkipped)
{
	EXPECT_FALSE(negotiate_against([](int fd, const Request &q) {
		Header h = q.header;
		h.flags = flag_server_to_redir | flag_async_command;
		h.async_id = 42;
		h.status = static_cast<uint32_t>(Status::pending);
		Writer w;
		encode_header(w, h);
		encode_error_response(w);
		send(fd, w.take());
		send(fd, valid_negotiate_response(q.header));
	}));
}

TEST(ExampleClient, NoCreditsNoRequest)
{
	ScriptedPeer p;
	p.script([&](int fd) {
		Request q = receive(fd);
		send(fd, response_to(q.header, 0, [](Writer &w) {
			     encode_negotiate_response(w, negotiate_response(dialect_311));
		     }, 0));
	});
	Client &c = p.client();
	ASSERT_FALSE(c.negotiate());
	p.finish();
	EXPECT_EQ(c.credits(), 0u);
	EXPECT_EQ(c.session_setup(), std::errc::resource_unavailable_try_again);
}

TEST(ExampleClient, EncryptionDemandIsRefused)
{
	ScriptedPeer p;
	p.script([&](int fd) {
		answer_negotiate(fd, dialect_311);
		Request q = receive(fd);
		ntlm::ChallengeMessage ch;
		ch.flags = ntlm::client_flags;
		auto chb = ntlm::encode_challenge(ch);
		Header h = q.header;
		h.session_id = 5;
		send(fd, response_to(h, static_cast<uint32_t>(Status::more_processing_required),
				     [&](Writer &w) { encode_session_setup_response(w, { 0, *chb }); }));
		q = receive(fd);
		send(fd, response_to(q.header, 0, [](Writer &w) {
			     encode_session_setup_response(w, { session_flag_encrypt_data, {} });
		     }));
	});
	Client &c = p.client();
	ASSERT_FALSE(c.negotiate());
	EXPECT_EQ(c.session_setup(), std::errc::protocol_not_supported);
	p.finish();
}

/*
 * The --depth pipeline's primitives: three ECHOs outstanding, answered in
 * reverse order; each response is matched by MessageId, the credits add
 * up, and exchange() refuses to interleave while requests are outstanding.
 */
TEST(ExampleClient, ResponsesOutOfOrderWithRequestsOutstanding)
{
	ScriptedPeer p;
	p.script([&](int fd) {
		answer_negotiate(fd, dialect_311);
		Request q[3];
		for (auto &r : q) {
			r = receive(fd);
			EXPECT_EQ(r.header.command, Command::echo);
		}
		for (int i = 2; i >= 0; i--)
			send(fd, response_to(q[i].header, 0, [](Writer &w) { encode_empty(w); }, 2));
	});
	Client &c = p.client();
	ASSERT_FALSE(c.negotiate());
	uint32_t credits = c.credits();
	ASSERT_GE(credits, 3u);
	uint64_t ids[3];
	for (auto &id : ids) {
		auto r = c.send_request(Command::echo, 1, [](Writer &w) {
			encode_empty(w);
			return std::error_code();
		});
		ASSERT_TRUE(r) << r.error().message();
		id = *r;
	}
	EXPECT_EQ(c.outstanding(), 3u);
	EXPECT_EQ(ids[1], ids[0] + 1);
	EXPECT_EQ(ids[2], ids[0] + 2);
	EXPECT_EQ(c.credits(), credits - 3);
	auto busy = c.exchange(Command::echo, 1, [](Writer &w) {
		encode_empty(w);
		return std::error_code();
	});
	ASSERT_FALSE(busy);
	EXPECT_EQ(busy.error(), std::errc::device_or_resource_busy);
	for (int i = 2; i >= 0; i--) {
		auto r = c.receive_response();
		ASSERT_TRUE(r) << r.error().message();
		EXPECT_EQ(r->header.message_id, ids[i]);
		EXPECT_FALSE(Client::status_of(*r));
	}
	EXPECT_EQ(c.outstanding(), 0u);
	EXPECT_EQ(c.credits(), credits - 3 + 6);
	p.finish();
}
