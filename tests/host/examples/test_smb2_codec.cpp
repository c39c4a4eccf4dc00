// SPDX-License-Identifier: GPL-2.0
//
// The example SMB2 codec: byte-exact fields where [MS-SMB2] fixes them
// (header, READ/WRITE with the RDMA channel, negotiate contexts), round
// trips, and every decoder against truncated and hostile messages.
#include <gtest/gtest.h>

#include <functional>

#include "smb2/preauth.hpp"
#include "smb2/smb2.hpp"

using namespace smb2;

namespace {

Bytes message(Command c, const std::function<void(Writer &)> &body, bool response = false)
{
	Writer w;
	Header h;
	h.command = c;
	h.message_id = 7;
	h.session_id = 0x1122334455667788ull;
	h.tree_id = 5;
	h.flags = response ? flag_server_to_redir : 0;
	encode_header(w, h);
	body(w);
	return w.take();
}

/* Every proper prefix of a valid message must fail to decode, not crash. */
template <class Decode> void expect_every_truncation_fails(const Bytes &m, Decode decode)
{
	for (size_t n = 0; n < m.size(); n++) {
		Bytes cut(m.begin(), m.begin() + static_cast<long>(n));
		auto r = decode(ByteView(cut));
		/* A prefix may still be a complete message (trailing padding byte). */
		if (n + 1 == m.size())
			continue;
		EXPECT_FALSE(r) << "decoded a " << n << "-byte prefix of " << m.size();
	}
}

const std::vector<BufferDescriptor> three_descriptors = {
	{ 0x1000, 0xAABBCCDD, 4096 },
	{ 0x7f0000002000ull, 0x11, 65536 },
	{ 3, 0x22, 1 },
};

} // namespace

TEST(ExampleSmb2, HeaderLayout)
{
	Writer w;
	Header h;
	h.credit_charge = 3;
	h.command = Command::write;
	h.credits = 256;
	h.message_id = 0x0102030405060708ull;
	h.tree_id = 0x0A0B0C0D;
	h.session_id = 0x1112131415161718ull;
	encode_header(w, h);
	Bytes b = w.take();
	ASSERT_EQ(b.size(), header_size);
	EXPECT_EQ(to_hex(ByteView(b).subspan(0, 4)), "fe534d42");
	EXPECT_EQ(load_le16(&b[4]), 64);
	EXPECT_EQ(load_le16(&b[6]), 3);
	EXPECT_EQ(load_le16(&b[12]), 9);
	EXPECT_EQ(load_le16(&b[14]), 256);
	EXPECT_EQ(load_le64(&b[24]), 0x0102030405060708ull);
	EXPECT_EQ(load_le32(&b[36]), 0x0A0B0C0Du);
	EXPECT_EQ(load_le64(&b[40]), 0x1112131415161718ull);
	auto d = decode_header(b);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->command, Command::write);
	EXPECT_EQ(d->tree_id, 0x0A0B0C0Du);
	EXPECT_FALSE(d->is_response());

	/* Async header: AsyncId where ProcessId/TreeId were. */
	h.flags = flag_async_command | flag_server_to_redir;
	h.async_id = 0xDEADBEEFCAFEull;
	Writer w2;
	encode_header(w2, h);
	auto a = decode_header(w2.buffer());
	ASSERT_TRUE(a);
	EXPECT_TRUE(a->is_async());
	EXPECT_EQ(a->async_id, 0xDEADBEEFCAFEull);

	Bytes bad = b;
	bad[0] = 0xFF; /* SMB1 or garbage */
	EXPECT_EQ(decode_header(bad).error(), ParseError::bad_protocol_id);
	bad = b;
	bad[4] = 65;
	EXPECT_EQ(decode_header(bad).error(), ParseError::bad_structure_size);
	EXPECT_EQ(decode_header(ByteView(b).subspan(0, 63)).error(), ParseError::truncated);
}

TEST(ExampleSmb2, WriteOverRdmaChannelLayout)
{
	/* [MS-SMB2] 2.2.21 + 3.2.4.7: Length 0, DataOffset 0, RemainingBytes, channel info at 112. */
	WriteRequest q;
	q.offset = 4096;
	q.file_id = { 1, 2 };
	q.channel = Channel::rdma_v1_invalidate;
	q.remaining_bytes = 1 << 20;
	q.channel_info = three_descriptors;
	Bytes m = message(Command::write, [&](Writer &w) { encode_write_request(w, q); });
	ASSERT_EQ(m.size(), 112u + 48u);
	EXPECT_EQ(load_le16(&m[64]), 49);		    /* StructureSize */
	EXPECT_EQ(load_le16(&m[66]), 0);		    /* DataOffset */
	EXPECT_EQ(load_le32(&m[68]), 0u);		    /* Length */
	EXPECT_EQ(load_le64(&m[72]), 4096u);		    /* Offset */
	EXPECT_EQ(load_le32(&m[96]), 2u);		    /* Channel */
	EXPECT_EQ(load_le32(&m[100]), 1u << 20);	    /* RemainingBytes */
	EXPECT_EQ(load_le16(&m[104]), 112);		    /* WriteChannelInfoOffset */
	EXPECT_EQ(load_le16(&m[106]), 48);		    /* WriteChannelInfoLength */
	EXPECT_EQ(load_le64(&m[112]), 0x1000u);		    /* Buffer Descriptor V1 */
	EXPECT_EQ(load_le32(&m[120]), 0xAABBCCDDu);
	EXPECT_EQ(load_le32(&m[124]), 4096u);
	auto d = decode_write_request(m);
	ASSERT_TRUE(d) << d.error().message();
	EXPECT_EQ(d->channel_info, three_descriptors);
	EXPECT_EQ(d->remaining_bytes, 1u << 20);
	EXPECT_TRUE(d->data.empty());
	expect_every_truncation_fails(m, decode_write_request);
}

TEST(ExampleSmb2, ReadOverRdmaChannelLayout)
{
	ReadRequest q;
	q.length = 4 << 20;
	q.offset = 0;
	q.file_id = { 9, 10 };
	q.channel = Channel::rdma_v1;
	q.channel_info = { three_descriptors[0] };
	Bytes m = message(Command::read, [&](Writer &w) { encode_read_request(w, q); });
	ASSERT_EQ(m.size(), 112u + 16u);
	EXPECT_EQ(load_le16(&m[64]), 49);
	EXPECT_EQ(load_le32(&m[68]), 4u << 20); /* Length */
	EXPECT_EQ(load_le64(&m[88]), 10u);	/* FileId.Volatile */
	EXPECT_EQ(load_le32(&m[100]), 1u);	/* Channel */
	EXPECT_EQ(load_le16(&m[108]), 112);	/* ReadChannelInfoOffset */
	EXPECT_EQ(load_le16(&m[110]), 16);	/* ReadChannelInfoLength */
	auto d = decode_read_request(m);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->channel, Channel::rdma_v1);
	EXPECT_EQ(d->channel_info.size(), 1u);
	EXPECT_EQ(d->file_id, (FileId{ 9, 10 }));

	/* The response over RDMA: no inline data, DataRemaining = bytes written. */
	ReadResponse r;
	r.data_remaining = 4 << 20;
	Bytes rsp = message(Command::read, [&](Writer &w) { encode_read_response(w, r); }, true);
	/* Exactly the fixed part: cifs.ko reads no further after an RDMA READ. */
	EXPECT_EQ(rsp.size(), 80u);
	auto dr = decode_read_response(rsp);
	ASSERT_TRUE(dr);
	EXPECT_EQ(dr->data_length, 0u);
	EXPECT_EQ(dr->data_remaining, 4u << 20);
	expect_every_truncation_fails(rsp, decode_read_response);
}

TEST(ExampleSmb2, HostileChannelInfo)
{
	ReadRequest q;
	q.length = 10;
	q.channel = Channel::rdma_v1;
	q.channel_info = { three_descriptors[0] };
	Bytes m = message(Command::read, [&](Writer &w) { encode_read_request(w, q); });
	Bytes bad = m;
	store_le16(&bad[110], 15); /* not a whole descriptor */
	EXPECT_EQ(decode_read_request(bad).error(), ParseError::bad_value);
	bad = m;
	store_le16(&bad[110], 32); /* runs past the message */
	EXPECT_EQ(decode_read_request(bad).error(), ParseError::bad_offset);
	bad = m;
	store_le16(&bad[108], 40); /* inside the header */
	EXPECT_EQ(decode_read_request(bad).error(), ParseError::bad_offset);
	bad = m;
	store_le16(&bad[108], 0xFFFF);
	EXPECT_EQ(decode_read_request(bad).error(), ParseError::bad_offset);
	EXPECT_EQ(decode_descriptors(Bytes(17)).error(), ParseError::bad_value);
}

TEST(ExampleSmb2, InlineReadAndWriteData)
{
	Bytes payload = { 1, 2, 3, 4, 5 };
	WriteRequest q;
	q.data = payload;
	Bytes m = message(Command::write, [&](Writer &w) { encode_write_request(w, q); });
	EXPECT_EQ(load_le16(&m[66]), 112); /* DataOffset */
	EXPECT_EQ(load_le32(&m[68]), 5u);  /* Length */
	auto d = decode_write_request(m);
	ASSERT_TRUE(d);
	EXPECT_EQ(Bytes(d->data.begin(), d->data.end()), payload);

	ReadResponse r;
	r.data = payload;
	Bytes rsp = message(Command::read, [&](Writer &w) { encode_read_response(w, r); }, true);
	EXPECT_EQ(rsp[66], 80); /* DataOffset */
	auto dr = decode_read_response(rsp);
	ASSERT_TRUE(dr);
	EXPECT_EQ(Bytes(dr->data.begin(), dr->data.end()), payload);
	/* A DataLength running past the message. */
	Bytes bad = rsp;
	store_le32(&bad[68], 6);
	EXPECT_EQ(decode_read_response(bad).error(), ParseError::bad_offset);
	/* A DataOffset inside the fixed part. */
	bad = rsp;
	bad[66] = 64;
	EXPECT_EQ(decode_read_response(bad).error(), ParseError::bad_offset);
}

TEST(ExampleSmb2, Negotiate311Contexts)
{
	NegotiateRequest q;
	q.capabilities = cap_large_mtu;
	q.dialects = { dialect_311 };
	PreauthIntegrity p{ { hash_sha512 }, Bytes(32, 0x5a) };
	q.contexts = { encode_preauth_context(p) };
	Bytes m = message(Command::negotiate, [&](Writer &w) { encode_negotiate_request(w, q); });
	/* Dialects at 100, the first context 8-aligned after them: 104. */
	EXPECT_EQ(load_le16(&m[64]), 36);
	EXPECT_EQ(load_le16(&m[66]), 1);
	EXPECT_EQ(load_le32(&m[100 - 8]), 104u); /* NegotiateContextOffset */
	EXPECT_EQ(load_le16(&m[100 - 4]), 1);	 /* NegotiateContextCount */
	EXPECT_EQ(load_le16(&m[100]), dialect_311);
	EXPECT_EQ(load_le16(&m[104]), context_preauth_integrity);
	EXPECT_EQ(load_le16(&m[106]), 38); /* 2 + 2 + 2 + 32 */
	EXPECT_EQ(load_le16(&m[112]), 1);  /* HashAlgorithmCount */
	EXPECT_EQ(load_le16(&m[114]), 32); /* SaltLength */
	EXPECT_EQ(load_le16(&m[116]), hash_sha512);
	auto d = decode_negotiate_request(m);
	ASSERT_TRUE(d) << d.error().message();
	ASSERT_EQ(d->contexts.size(), 1u);
	auto dp = decode_preauth_context(d->contexts[0].data);
	ASSERT_TRUE(dp);
	EXPECT_EQ(dp->salt, Bytes(32, 0x5a));

	NegotiateResponse r;
	r.dialect = dialect_311;
	r.max_read_size = r.max_write_size = r.max_transact_size = 8 << 20;
	r.security_buffer = Bytes(74, 0x60);
	r.contexts = { encode_preauth_context(p) };
	Bytes rsp = message(Command::negotiate, [&](Writer &w) { encode_negotiate_response(w, r); },
			    true);
	EXPECT_EQ(load_le16(&rsp[64 + 56]), 128); /* SecurityBufferOffset */
	auto dr = decode_negotiate_response(rsp);
	ASSERT_TRUE(dr) << dr.error().message();
	EXPECT_EQ(dr->max_read_size, 8u << 20);
	EXPECT_EQ(dr->security_buffer, Bytes(74, 0x60));
	ASSERT_EQ(dr->contexts.size(), 1u);
	expect_every_truncation_fails(rsp, decode_negotiate_response);

	/* Hostile: unaligned context offset, more contexts than fit, huge count. */
	Bytes bad = rsp;
	uint32_t ctx_off = load_le32(&bad[64 + 60]);
	store_le32(&bad[64 + 60], ctx_off + 1);
	EXPECT_EQ(decode_negotiate_response(bad).error(), ParseError::bad_offset);
	bad = rsp;
	store_le16(&bad[64 + 6], 2);
	EXPECT_EQ(decode_negotiate_response(bad).error(), ParseError::bad_offset);
	bad = rsp;
	store_le16(&bad[64 + 6], 0xFFFF);
	EXPECT_EQ(decode_negotiate_response(bad).error(), ParseError::too_large);
	bad = rsp;
	store_le16(&bad[64 + 58], 0xFFFF); /* SecurityBufferLength */
	EXPECT_EQ(decode_negotiate_response(bad).error(), ParseError::bad_offset);
	/* A context whose DataLength runs past the message. */
	bad = rsp;
	store_le16(&bad[ctx_off + 2], 0xFFF0);
	EXPECT_EQ(decode_negotiate_response(bad).error(), ParseError::bad_offset);
	EXPECT_FALSE(decode_preauth_context(Bytes{ 1, 0, 40, 0, 1, 0 })); /* salt missing */
	EXPECT_FALSE(decode_preauth_context(Bytes{ 0, 0, 0, 0 }));	   /* no algorithm */
}

TEST(ExampleSmb2, Negotiate302HasNoContexts)
{
	NegotiateResponse r;
	r.dialect = dialect_302;
	r.contexts = { encode_preauth_context({ { hash_sha512 }, Bytes(32) }) };
	Bytes rsp = message(Command::negotiate, [&](Writer &w) { encode_negotiate_response(w, r); },
			    true);
	EXPECT_EQ(load_le16(&rsp[64 + 6]), 0);
	auto d = decode_negotiate_response(rsp);
	ASSERT_TRUE(d);
	EXPECT_TRUE(d->contexts.empty());
	EXPECT_EQ(dialect_name(dialect_302), "3.0.2");
	EXPECT_EQ(dialect_name(dialect_311), "3.1.1");
	EXPECT_EQ(dialect_name(dialect_300), "3.0");
}

TEST(ExampleSmb2, SessionTreeCreateCloseRoundTrips)
{
	SessionSetupRequest ss;
	ss.security_buffer = { 'N', 'T', 'L', 'M' };
	Bytes m = message(Command::session_setup,
			  [&](Writer &w) { encode_session_setup_request(w, ss); });
	EXPECT_EQ(load_le16(&m[64 + 12]), 88); /* SecurityBufferOffset */
	auto dss = decode_session_setup_request(m);
	ASSERT_TRUE(dss);
	EXPECT_EQ(dss->security_buffer, ss.security_buffer);

	SessionSetupResponse ssr{ session_flag_is_guest, { 1, 2, 3 } };
	Bytes rsp = message(Command::session_setup,
			    [&](Writer &w) { encode_session_setup_response(w, ssr); }, true);
	auto dssr = decode_session_setup_response(rsp);
	ASSERT_TRUE(dssr);
	EXPECT_EQ(dssr->session_flags, session_flag_is_guest);
	EXPECT_EQ(dssr->security_buffer, (Bytes{ 1, 2, 3 }));
	expect_every_truncation_fails(rsp, decode_session_setup_response);

	TreeConnectRequest tc{ 0, "\\\\10.77.0.1\\share" };
	m = message(Command::tree_connect,
		    [&](Writer &w) { ASSERT_FALSE(encode_tree_connect_request(w, tc)); });
	EXPECT_EQ(load_le16(&m[68]), 72);
	auto dtc = decode_tree_connect_request(m);
	ASSERT_TRUE(dtc);
	EXPECT_EQ(dtc->path, tc.path);
	Bytes bad = m;
	store_le16(&bad[70], 3); /* odd UTF-16 length */
	EXPECT_FALSE(decode_tree_connect_request(bad));

	TreeConnectResponse tcr{ share_type_disk, 0, 0, 0x1f01ff };
	rsp = message(Command::tree_connect,
		      [&](Writer &w) { encode_tree_connect_response(w, tcr); }, true);
	auto dtcr = decode_tree_connect_response(rsp);
	ASSERT_TRUE(dtcr);
	EXPECT_EQ(dtcr->maximal_access, 0x1f01ffu);
	expect_every_truncation_fails(rsp, decode_tree_connect_response);

	CreateRequest cr;
	cr.name = "dir\\file.bin";
	cr.desired_access = generic_read;
	cr.create_disposition = disposition_overwrite_if;
	m = message(Command::create, [&](Writer &w) { ASSERT_FALSE(encode_create_request(w, cr)); });
	EXPECT_EQ(load_le16(&m[64 + 44]), 120); /* NameOffset */
	auto dcr = decode_create_request(m);
	ASSERT_TRUE(dcr);
	EXPECT_EQ(dcr->name, cr.name);
	EXPECT_EQ(dcr->create_disposition, disposition_overwrite_if);

	CreateResponse crr;
	crr.file_id = { 0x55, 0x66 };
	crr.end_of_file = 12345;
	rsp = message(Command::create, [&](Writer &w) { encode_create_response(w, crr); }, true);
	auto dcrr = decode_create_response(rsp);
	ASSERT_TRUE(dcrr);
	EXPECT_EQ(dcrr->file_id, (FileId{ 0x55, 0x66 }));
	EXPECT_EQ(dcrr->end_of_file, 12345u);
	expect_every_truncation_fails(rsp, decode_create_response);
	bad = rsp;
	store_le32(&bad[64 + 80], 200); /* CreateContextsOffset */
	store_le32(&bad[64 + 84], 0xFFFFFFFF);
	EXPECT_EQ(decode_create_response(bad).error(), ParseError::bad_offset);

	CloseResponse cl;
	cl.end_of_file = 99;
	rsp = message(Command::close, [&](Writer &w) { encode_close_response(w, cl); }, true);
	auto dcl = decode_close_response(rsp);
	ASSERT_TRUE(dcl);
	EXPECT_EQ(dcl->end_of_file, 99u);
	expect_every_truncation_fails(rsp, decode_close_response);

	rsp = message(Command::logoff, [&](Writer &w) { encode_empty(w); }, true);
	EXPECT_FALSE(decode_empty(rsp));
	EXPECT_TRUE(decode_empty(ByteView(rsp).subspan(0, rsp.size() - 1)));

	WriteResponse wr{ 4096, 0 };
	rsp = message(Command::write, [&](Writer &w) { encode_write_response(w, wr); }, true);
	auto dwr = decode_write_response(rsp);
	ASSERT_TRUE(dwr);
	EXPECT_EQ(dwr->count, 4096u);
	expect_every_truncation_fails(rsp, decode_write_response);
}

TEST(ExampleSmb2, ErrorResponse)
{
	Bytes rsp = message(Command::create, [&](Writer &w) { encode_error_response(w); }, true);
	EXPECT_FALSE(decode_error_response(rsp));
	Bytes bad = rsp;
	store_le32(&bad[68], 1000); /* ByteCount beyond the message */
	EXPECT_EQ(decode_error_response(bad), ParseError::bad_offset);
	bad = rsp;
	store_le16(&bad[64], 8);
	EXPECT_EQ(decode_error_response(bad), ParseError::bad_structure_size);
}

TEST(ExampleSmb2, WrongStructureSizeIsRejected)
{
	/*
	 * A response body of another command must not be taken for this one.
	 * (READ and WRITE responses share StructureSize 17: the client tells
	 * them apart by the header's Command, see test_client.cpp.)
	 */
	Bytes rsp = message(Command::write, [&](Writer &w) { encode_write_response(w, {}); }, true);
	EXPECT_EQ(decode_create_response(rsp).error(), ParseError::bad_structure_size);
	EXPECT_FALSE(decode_close_response(rsp));
	EXPECT_EQ(decode_tree_connect_response(rsp).error(), ParseError::bad_structure_size);
}

TEST(ExampleSmb2, CreditCharge)
{
	EXPECT_EQ(credit_charge_for(0), 1);
	EXPECT_EQ(credit_charge_for(1), 1);
	EXPECT_EQ(credit_charge_for(65536), 1);
	EXPECT_EQ(credit_charge_for(65537), 2);
	EXPECT_EQ(credit_charge_for(8 << 20), 128);
}

TEST(ExampleSmb2, ReaderIsSticky)
{
	Bytes b = { 1, 2, 3 };
	Reader r(b);
	EXPECT_EQ(r.le16(), 0x0201);
	EXPECT_EQ(r.le32(), 0u); /* past the end */
	EXPECT_FALSE(r.ok());
	EXPECT_EQ(r.u8(), 0); /* and stays failed */
	EXPECT_FALSE(slice(b, 2, 2));
	EXPECT_FALSE(slice(b, 4, 0));
	EXPECT_FALSE(slice(b, ~0ull, 2));
	EXPECT_TRUE(slice(b, 3, 0));
}

TEST(ExamplePreauth, Sha512Chain)
{
	/* Expected values from an independent SHA-512 (Python's hashlib). */
	PreauthHash h;
	EXPECT_EQ(h.value(), PreauthHash::Value{});
	std::string a = "negotiate request", b = "negotiate response";
	h.update({ reinterpret_cast<const uint8_t *>(a.data()), a.size() });
	EXPECT_EQ(to_hex(h.value()),
		  "117684812446a0c425b41a5a4052365bdf279db792b3ad572e2399407e76c15f"
		  "627acacd01dee5ace3dc376a20b3a3391674d6a324bc82e10a40acf8e557839a");
	h.update({ reinterpret_cast<const uint8_t *>(b.data()), b.size() });
	EXPECT_EQ(to_hex(h.value()),
		  "37311ce11673083a4dac7793e056d1525c9bea2864fa8795404f6191fbb3aacf"
		  "294745e50a3bd0f09b69abba6e84a9fc5a5fcc3bec21db21c4f92edb6a81edf5");
}
