// SPDX-License-Identifier: GPL-2.0
//
// The example server's SMB2 processing, on the host: the example client
// and the server's Connection on a socketpair (no SMB-Direct, so READ and
// WRITE go inline and the RDMA channel is refused), against a temporary
// share directory: sessions, files, compounds with related operations,
// directory listings, rename, delete, and paths that try to leave the share.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "smb2-client/client.hpp"
#include "smb2-server/connection.hpp"
#include "smb2-server/share.hpp"
#include "smb2/framing.hpp"
#include "smb2/unicode.hpp"

using namespace smb2;

namespace {

std::string slurp(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return { std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>() };
}

class ServerTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/sd-example-share.XXXXXX";
		ASSERT_TRUE(mkdtemp(tmpl));
		dir_ = tmpl;
		int fds[2];
		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
		share_ = std::make_unique<Share>(dir_);
		ASSERT_TRUE(share_->ok());
		server_ = std::thread([this, fd = fds[1]] {
			Connection c(fd, *share_, ServerConfig{}, nullptr);
			server_error_ = c.serve();
			counters_ = c.counters();
		});
		ClientConfig config;
		config.dialect = dialect_;
		config.credentials = { "U", "P", "", "WS" };
		client_ = std::make_unique<Client>(fds[0], config);
	}
	void TearDown() override
	{
		stop();
		std::string cmd = "rm -rf '" + dir_ + "'";
		EXPECT_EQ(std::system(cmd.c_str()), 0);
	}
	/* Closes the client's end; the server's serve() returns. */
	void stop()
	{
		if (client_)
			::shutdown(client_->fd(), SHUT_RDWR);
		if (server_.joinable())
			server_.join();
	}
	void connect()
	{
		ASSERT_FALSE(client_->negotiate());
		ASSERT_FALSE(client_->session_setup());
		ASSERT_FALSE(client_->tree_connect("\\\\host\\share"));
	}
	std::string path(const std::string &name) const
	{
		return dir_ + "/" + name;
	}
	Result<Client::Exchange> request(Command c, const Client::BodyEncoder &body,
					 std::initializer_list<Status> also_ok = {})
	{
		return client_->exchange(c, 1, body, also_ok);
	}
	/* Directory names QUERY_DIRECTORY returns for a pattern. */
	std::set<std::string> list(const std::string &pattern, uint8_t info_class)
	{
		auto dir = client_->create("", generic_read, disposition_open, 0);
		EXPECT_TRUE(dir);
		std::set<std::string> names;
		for (;;) {
			QueryDirectoryRequest q;
			q.info_class = info_class;
			q.file_id = dir->id;
			q.pattern = pattern;
			q.output_buffer_length = 200; /* a few entries per call */
			auto x = request(Command::query_directory, [&](Writer &w) {
				encode_query_directory_request(w, q);
				return std::error_code();
			});
			if (!x) {
				EXPECT_TRUE(x.error() == Status::no_more_files ||
					    x.error() == Status::no_such_file)
					<< x.error().message();
				break;
			}
			auto buf = decode_buffer_response(x->response);
			EXPECT_TRUE(buf);
			/* Walk NextEntryOffset; the name's offset depends on the class. */
			size_t name_off = info_class == 38 ? 80 : info_class == 37 ? 104 : 64;
			size_t pos = 0;
			for (;;) {
				Reader r(*buf, pos);
				uint32_t next = r.le32();
				r.seek(pos + 60);
				uint32_t len = r.le32();
				r.seek(pos + name_off);
				ByteView n = r.bytes(len);
				EXPECT_TRUE(r.ok());
				if (!r.ok())
					break;
				names.insert(*utf8_from_utf16le(n));
				if (next == 0)
					break;
				EXPECT_EQ(next % 8, 0u);
				pos += next;
			}
		}
		EXPECT_FALSE(client_->close(dir->id));
		return names;
	}

	uint16_t dialect_ = dialect_311;
	std::string dir_;
	std::unique_ptr<Share> share_;
	std::unique_ptr<Client> client_;
	std::thread server_;
	std::error_code server_error_;
	IoCounters counters_;
};

} // namespace

TEST_F(ServerTest, GuestSessionAndInlineIo)
{
	connect();
	EXPECT_EQ(client_->negotiated().dialect, dialect_311);
	EXPECT_EQ(client_->session_flags(), session_flag_is_guest);
	EXPECT_EQ(client_->negotiated().security_mode & signing_required, 0);
	auto f = client_->create("a.txt", generic_read | generic_write, disposition_overwrite_if);
	ASSERT_TRUE(f) << f.error().message();
	EXPECT_EQ(f->create_action, action_created);
	std::string text = "hello over SMB2";
	auto w = client_->write(f->id, 3, { reinterpret_cast<const uint8_t *>(text.data()),
					    text.size() });
	ASSERT_TRUE(w);
	EXPECT_EQ(*w, text.size());
	uint8_t buf[64] = {};
	auto r = client_->read(f->id, 3, { buf, sizeof(buf) });
	ASSERT_TRUE(r);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(buf), *r), text);
	/* Past the end: STATUS_END_OF_FILE, which read() reports as 0 bytes. */
	auto eof = client_->read(f->id, 1000, { buf, sizeof(buf) });
	ASSERT_TRUE(eof);
	EXPECT_EQ(*eof, 0u);
	EXPECT_FALSE(client_->close(f->id));
	EXPECT_EQ(slurp(path("a.txt")), std::string(3, '\0') + text);
	/* A closed handle is gone. */
	EXPECT_EQ(client_->close(f->id), Status::file_closed);
	/* No SMB-Direct here: the RDMA channel is refused by the client itself. */
	iovec v{ buf, 1 };
	EXPECT_EQ(client_->read_rdma(f->id, 0, { &v, 1 }, Channel::rdma_v1).error(),
		  std::errc::operation_not_supported);
	EXPECT_FALSE(client_->tree_disconnect());
	EXPECT_FALSE(client_->logoff());
	stop();
	EXPECT_FALSE(server_error_);
	EXPECT_EQ(counters_.inline_writes, 1u);
	EXPECT_EQ(counters_.rdma_read_transfers + counters_.rdma_write_transfers, 0u);
}

TEST_F(ServerTest, RdmaChannelWithoutSmbDirectIsInvalid)
{
	connect();
	auto f = client_->create("r.bin", generic_read | generic_write, disposition_overwrite_if);
	ASSERT_TRUE(f);
	ReadRequest q;
	q.length = 4096;
	q.file_id = f->id;
	q.channel = Channel::rdma_v1_invalidate;
	q.channel_info = { { 0x1000, 0x42, 4096 } };
	auto x = request(Command::read, [&](Writer &w) {
		encode_read_request(w, q);
		return std::error_code();
	});
	EXPECT_EQ(x.error(), Status::invalid_parameter);
}

TEST_F(ServerTest, Dispositions)
{
	connect();
	EXPECT_EQ(client_->create("none", generic_read, disposition_open).error(),
		  Status::object_name_not_found);
	EXPECT_EQ(client_->create("nodir\\x", generic_read, disposition_open_if).error(),
		  Status::object_path_not_found);
	auto f = client_->create("c", generic_write, disposition_create);
	ASSERT_TRUE(f);
	EXPECT_FALSE(client_->close(f->id));
	EXPECT_EQ(client_->create("c", generic_write, disposition_create).error(),
		  Status::object_name_collision);
	auto o = client_->create("c", generic_read, disposition_open_if);
	ASSERT_TRUE(o);
	EXPECT_EQ(o->create_action, action_opened);
	EXPECT_FALSE(client_->close(o->id));
	/* Directories through CREATE with DIRECTORY_FILE. */
	CreateRequest cr;
	cr.name = "d";
	cr.desired_access = generic_read;
	cr.create_disposition = disposition_create;
	cr.create_options = option_directory_file;
	auto x = request(Command::create, [&](Writer &w) { return encode_create_request(w, cr); });
	ASSERT_TRUE(x);
	struct stat st {};
	ASSERT_EQ(stat(path("d").c_str(), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(client_->create("d", generic_read, disposition_open).error(),
		  Status::file_is_a_directory);
}

TEST_F(ServerTest, PathsStayInsideTheShare)
{
	connect();
	ASSERT_EQ(symlink("/etc", path("out").c_str()), 0);
	for (const char *name : { "..\\etc\\passwd", "a\\..\\..\\x", ".\\x", "a\\\\b", "a/b",
				  "out\\passwd" }) {
		auto f = client_->create(name, generic_read, disposition_open);
		EXPECT_FALSE(f) << name;
		if (f)
			(void)client_->close(f->id);
	}
	/* A CREATE of a new file through the link must not land outside either. */
	EXPECT_FALSE(client_->create("out\\sd-example-escape", generic_write, disposition_create));
	EXPECT_NE(access("/etc/sd-example-escape", F_OK), 0);
}

TEST_F(ServerTest, CompoundWithRelatedOperations)
{
	connect();
	{
		std::ofstream f(path("q.bin"));
		f << std::string(1234, 'q');
	}
	/* CREATE + QUERY_INFO(FileAllInformation) + CLOSE, as cifs.ko sends for stat(). */
	auto build = [&](Command c, uint64_t mid, bool related, const std::function<void(Writer &)> &b) {
		Writer w;
		Header h;
		h.command = c;
		h.message_id = mid;
		h.credit_charge = 1;
		h.credits = 8;
		h.session_id = 0; /* filled below */
		h.flags = related ? flag_related_operations : 0;
		encode_header(w, h);
		b(w);
		return w.take();
	};
	/* The session id the server gave: learn it from an ECHO's response. */
	auto echo = request(Command::echo, [](Writer &w) {
		encode_empty(w);
		return std::error_code();
	});
	ASSERT_TRUE(echo);
	uint64_t sid = echo->header.session_id;
	CreateRequest cr;
	cr.name = "q.bin";
	cr.desired_access = file_read_attributes;
	cr.create_disposition = disposition_open;
	QueryInfoRequest qi;
	qi.info_type = info_type_file;
	qi.info_class = file_all_information;
	qi.output_buffer_length = 4096;
	qi.file_id = { ~0ull, ~0ull };
	Bytes parts[3] = {
		build(Command::create, 100, false, [&](Writer &w) { (void)encode_create_request(w, cr); }),
		build(Command::query_info, 101, true, [&](Writer &w) { encode_query_info_request(w, qi); }),
		build(Command::close, 102, true,
		      [&](Writer &w) { encode_close_request(w, { 0, { ~0ull, ~0ull } }); }),
	};
	Bytes compound;
	for (int i = 0; i < 3; i++) {
		store_le64(parts[i].data() + 40, sid);
		store_le32(parts[i].data() + 36, 1); /* TreeId */
		if (i < 2)
			parts[i].resize((parts[i].size() + 7) & ~size_t(7), 0);
		if (i < 2)
			store_le32(parts[i].data() + 20, static_cast<uint32_t>(parts[i].size()));
		compound.insert(compound.end(), parts[i].begin(), parts[i].end());
	}
	ASSERT_FALSE(write_message(client_->fd(), compound));
	auto rsp = read_message(client_->fd(), max_message_size);
	ASSERT_TRUE(rsp);
	auto split = split_compound(*rsp);
	ASSERT_TRUE(split) << split.error().message();
	ASSERT_EQ(split->size(), 3u);
	auto h1 = decode_header((*split)[1]);
	ASSERT_TRUE(h1);
	EXPECT_EQ(h1->status, 0u);
	EXPECT_TRUE(h1->flags & flag_related_operations);
	auto info = decode_buffer_response((*split)[1]);
	ASSERT_TRUE(info);
	ASSERT_GE(info->size(), 64u);
	EXPECT_EQ(load_le64(info->data() + 48), 1234u); /* StandardInformation.EndOfFile */
	auto h2 = decode_header((*split)[2]);
	ASSERT_TRUE(h2);
	EXPECT_EQ(h2->status, 0u);

	/* A failed CREATE fails the related operations with its status. */
	cr.name = "missing.bin";
	parts[0] = build(Command::create, 103, false, [&](Writer &w) { (void)encode_create_request(w, cr); });
	parts[1] = build(Command::close, 104, true,
			 [&](Writer &w) { encode_close_request(w, { 0, { ~0ull, ~0ull } }); });
	compound.clear();
	for (int i = 0; i < 2; i++) {
		store_le64(parts[i].data() + 40, sid);
		store_le32(parts[i].data() + 36, 1);
		if (i == 0) {
			parts[i].resize((parts[i].size() + 7) & ~size_t(7), 0);
			store_le32(parts[i].data() + 20, static_cast<uint32_t>(parts[i].size()));
		}
		compound.insert(compound.end(), parts[i].begin(), parts[i].end());
	}
	ASSERT_FALSE(write_message(client_->fd(), compound));
	rsp = read_message(client_->fd(), max_message_size);
	ASSERT_TRUE(rsp);
	split = split_compound(*rsp);
	ASSERT_TRUE(split);
	ASSERT_EQ(split->size(), 2u);
	EXPECT_EQ(decode_header((*split)[0])->status,
		  static_cast<uint32_t>(Status::object_name_not_found));
	EXPECT_EQ(decode_header((*split)[1])->status,
		  static_cast<uint32_t>(Status::object_name_not_found));
}

TEST_F(ServerTest, DirectoryListingRenameDelete)
{
	connect();
	for (const char *n : { "one.txt", "two.txt", "three.bin" }) {
		auto f = client_->create(n, generic_write, disposition_create);
		ASSERT_TRUE(f);
		EXPECT_FALSE(client_->close(f->id));
	}
	std::set<std::string> all = { ".", "..", "one.txt", "two.txt", "three.bin" };
	EXPECT_EQ(list("*", 38), all); /* FileIdFullDirectoryInformation, cifs.ko's */
	EXPECT_EQ(list("*", 37), all);
	EXPECT_EQ(list("*.TXT", 1), (std::set<std::string>{ "one.txt", "two.txt" }));
	EXPECT_TRUE(list("nothing*", 38).empty());

	/* Rename one.txt to sub-less new.txt; without ReplaceIfExists onto an existing name fails. */
	auto f = client_->create("one.txt", generic_read | access_delete, disposition_open);
	ASSERT_TRUE(f);
	auto rename = [&](const std::string &to, bool replace) {
		Writer b;
		b.u8(replace);
		b.zeros(7 + 8);
		Bytes name = *utf16le_from_utf8(to);
		b.le32(static_cast<uint32_t>(name.size()));
		b.bytes(name);
		SetInfoRequest s;
		s.info_type = info_type_file;
		s.info_class = 10;
		s.buffer = b.buffer();
		s.file_id = f->id;
		auto x = request(Command::set_info, [&](Writer &w) {
			encode_set_info_request(w, s);
			return std::error_code();
		});
		return x ? std::error_code() : x.error();
	};
	EXPECT_EQ(rename("two.txt", false), Status::object_name_collision);
	EXPECT_EQ(rename("..\\escaped.txt", false), Status::object_name_invalid);
	EXPECT_FALSE(rename("new.txt", false));
	EXPECT_FALSE(client_->close(f->id));
	EXPECT_NE(access(path("new.txt").c_str(), F_OK), -1);
	EXPECT_EQ(access(path("one.txt").c_str(), F_OK), -1);

	/* Delete: FileDispositionInformation, then CLOSE removes it. */
	f = client_->create("new.txt", access_delete, disposition_open);
	ASSERT_TRUE(f);
	SetInfoRequest s;
	s.info_type = info_type_file;
	s.info_class = 13;
	Bytes one = { 1 };
	s.buffer = one;
	s.file_id = f->id;
	ASSERT_TRUE(request(Command::set_info, [&](Writer &w) {
		encode_set_info_request(w, s);
		return std::error_code();
	}));
	EXPECT_NE(access(path("new.txt").c_str(), F_OK), -1);
	EXPECT_FALSE(client_->close(f->id));
	EXPECT_EQ(access(path("new.txt").c_str(), F_OK), -1);

	/* End of file: truncate three.bin to 10 bytes. */
	f = client_->create("three.bin", generic_write, disposition_open);
	ASSERT_TRUE(f);
	Writer eof;
	eof.le64(10);
	s.info_class = 20;
	s.buffer = eof.buffer();
	s.file_id = f->id;
	ASSERT_TRUE(request(Command::set_info, [&](Writer &w) {
		encode_set_info_request(w, s);
		return std::error_code();
	}));
	EXPECT_FALSE(client_->close(f->id));
	struct stat st {};
	ASSERT_EQ(stat(path("three.bin").c_str(), &st), 0);
	EXPECT_EQ(st.st_size, 10);
}

TEST_F(ServerTest, SharesAndSessionsAreChecked)
{
	ASSERT_FALSE(client_->negotiate());
	/* Nothing but NEGOTIATE/SESSION_SETUP before a session. */
	EXPECT_EQ(client_->tree_connect("\\\\h\\share"), Status::user_session_deleted);
	ASSERT_FALSE(client_->session_setup());
	EXPECT_EQ(client_->tree_connect("\\\\h\\IPC$"), Status::bad_network_name);
	/* No tree yet. */
	EXPECT_EQ(client_->create("x", generic_read, disposition_open_if).error(),
		  Status::network_name_deleted);
	ASSERT_FALSE(client_->tree_connect("\\\\h\\SHARE"));
	/* Filesystem information for statfs. */
	auto root = client_->create("", generic_read, disposition_open, 0);
	ASSERT_TRUE(root);
	QueryInfoRequest qi;
	qi.info_type = info_type_filesystem;
	qi.info_class = fs_full_size_information;
	qi.output_buffer_length = 64;
	qi.file_id = root->id;
	auto x = request(Command::query_info, [&](Writer &w) {
		encode_query_info_request(w, qi);
		return std::error_code();
	});
	ASSERT_TRUE(x);
	auto b = decode_buffer_response(x->response);
	ASSERT_TRUE(b);
	EXPECT_EQ(b->size(), 32u);
	/* Too small an output buffer for a fixed class. */
	qi.output_buffer_length = 8;
	x = request(Command::query_info, [&](Writer &w) {
		encode_query_info_request(w, qi);
		return std::error_code();
	});
	EXPECT_EQ(x.error(), Status::info_length_mismatch);
}

TEST_F(ServerTest, Dialect302)
{
	/* A fresh client asking 3.0.2 only (SetUp made a 3.1.1 one: replace it). */
	stop();
	std::string cmd = "rm -rf '" + dir_ + "'";
	ASSERT_EQ(std::system(cmd.c_str()), 0);
	dialect_ = dialect_302;
	SetUp();
	connect();
	EXPECT_EQ(client_->negotiated().dialect, dialect_302);
	EXPECT_TRUE(client_->negotiated().contexts.empty());
}

TEST_F(ServerTest, MalformedCompoundEndsTheConnection)
{
	connect();
	Writer w;
	Header h;
	h.command = Command::echo;
	h.next_command = 4096; /* beyond the message */
	encode_header(w, h);
	encode_empty(w);
	ASSERT_FALSE(write_message(client_->fd(), w.buffer()));
	auto m = read_message(client_->fd(), max_message_size);
	EXPECT_TRUE(is_end_of_stream(m.error()));
	server_.join();
	EXPECT_EQ(server_error_, ParseError::bad_offset);
}
