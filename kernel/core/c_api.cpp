// SPDX-License-Identifier: GPL-2.0
/*
 * The extern "C" entry points: argument checks and translation between the
 * C header's plain structs and the C++ engine, nothing else.
 */
#include "connection.h"
#include "negotiate.h"
#include "pdu.h"
#include "smbdirect_core.h"
#include "stream.h"

namespace
{

using namespace sd;

Connection *engine(sd_core_conn *conn)
{
	return reinterpret_cast<Connection *>(conn->opaque);
}

const Connection *engine(const sd_core_conn *conn)
{
	return reinterpret_cast<const Connection *>(conn->opaque);
}

/* Every call that takes actions leaves them defined, even on misuse. */
bool args_ok(const sd_core_conn *conn, sd_core_actions *act)
{
	if (act)
		__builtin_memset(act, 0, sizeof(*act));
	return conn && act;
}

} // namespace

extern "C" {

void sd_core_config_default(struct sd_core_config *cfg, unsigned int role)
{
	if (cfg)
		config_default(*cfg, role);
}

int sd_core_conn_init(struct sd_core_conn *conn, const struct sd_core_config *cfg)
{
	if (!conn || !cfg)
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->init(*cfg));
}

int sd_core_recv_posted(struct sd_core_conn *conn, unsigned int n, struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->recv_posted(n, *act));
}

int sd_core_on_connected(struct sd_core_conn *conn, unsigned long long now_ms,
			 struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->on_connected(now_ms, *act));
}

int sd_core_on_recv(struct sd_core_conn *conn, unsigned long long now_ms, const unsigned char *buf,
		    unsigned int len, struct sd_core_actions *act)
{
	if (!args_ok(conn, act) || (!buf && len))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->on_recv(now_ms, ByteSpan(buf, len), *act));
}

int sd_core_on_send_complete(struct sd_core_conn *conn, unsigned int n, struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->on_send_complete(n, *act));
}

int sd_core_on_timer(struct sd_core_conn *conn, unsigned long long now_ms,
		     struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->on_timer(now_ms, *act));
}

int sd_core_send_message(struct sd_core_conn *conn, unsigned int length,
			 struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->send_message(length, *act));
}

int sd_core_next_pdu(struct sd_core_conn *conn, unsigned char *buf, unsigned int cap,
		     unsigned int avail, struct sd_core_pdu *pdu)
{
	if (!conn || !buf || !pdu)
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->next_pdu(MutByteSpan(buf, cap), avail, *pdu));
}

int sd_core_next_pdu_copy(struct sd_core_conn *conn, unsigned char *buf, unsigned int cap,
			  const unsigned char *msg, unsigned int msg_len, struct sd_core_pdu *pdu)
{
	if (!conn || !buf || !pdu || (!msg && msg_len))
		return SD_CORE_E_INVALID_ARGUMENT;
	Connection *c = engine(conn);
	const u32 offset = c->fragmenter().offset();
	const u32 avail = msg_len > offset ? msg_len - offset : 0;
	const Errc e = c->next_pdu(MutByteSpan(buf, cap), avail, *pdu);
	if (e != Errc::ok)
		return to_c(e);
	/* next_pdu() checked that header + payload fit in buf. */
	const ByteSpan src = ByteSpan(msg, msg_len).sub(pdu->message_offset, pdu->payload_length);
	if (src.size() != pdu->payload_length)
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(MutByteSpan(buf, cap).copy_in(pdu->payload_offset, src));
}

int sd_core_disconnect(struct sd_core_conn *conn, int reason, struct sd_core_actions *act)
{
	if (!args_ok(conn, act))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(engine(conn)->disconnect(reason, *act));
}

int sd_core_get_params(const struct sd_core_conn *conn, struct sd_core_params *out)
{
	if (!conn || !out)
		return SD_CORE_E_INVALID_ARGUMENT;
	const Connection *c = engine(conn);
	if (c->state() != Connection::State::established)
		return SD_CORE_E_BAD_STATE;
	const Params &p = c->params();
	out->version = p.version;
	out->max_send_size = p.max_send_size;
	out->max_receive_size = p.max_receive_size;
	out->max_fragmented_send_size = p.max_fragmented_send_size;
	out->max_fragmented_receive_size = p.max_fragmented_receive_size;
	out->max_read_write_size = p.max_read_write_size;
	out->receive_credit_target = c->credits().receive_target();
	out->peer_credit_target = p.peer_credit_target;
	return SD_CORE_OK;
}

void sd_core_get_stats(const struct sd_core_conn *conn, struct sd_core_stats *out)
{
	if (!conn || !out)
		return;
	const Connection *c = engine(conn);
	out->state = static_cast<unsigned int>(c->state());
	out->send_credits = c->credits().send_credits();
	out->peer_credits = c->credits().peer_credits();
	out->receives_posted = c->credits().posted();
	out->sends_in_flight = c->sends_in_flight();
	out->message_pending = c->fragmenter().remaining();
}

void sd_core_stream_parser_init(struct sd_core_stream_parser *p, unsigned int max_message)
{
	if (p)
		stream_parser_init(*p, max_message);
}

int sd_core_stream_parse(struct sd_core_stream_parser *p, const unsigned char *data,
			 unsigned int len, struct sd_core_stream_chunk *out)
{
	if (!p || !out || (!data && len))
		return SD_CORE_E_INVALID_ARGUMENT;
	return to_c(stream_parse(*p, ByteSpan(data, len), *out));
}

void sd_core_stream_prefix(unsigned int length, unsigned char out[4])
{
	if (out)
		stream_prefix(length, out);
}

int sd_core_buffer_descriptor_encode(const struct sd_core_buffer_descriptor *d, unsigned char *buf,
				     unsigned int cap)
{
	if (!d || !buf)
		return SD_CORE_E_INVALID_ARGUMENT;
	const auto n = encode_buffer_descriptor(BufferDescriptor{ d->offset, d->token, d->length },
						MutByteSpan(buf, cap));
	return to_c(n.error());
}

int sd_core_buffer_descriptor_decode(const unsigned char *buf, unsigned int len,
				     struct sd_core_buffer_descriptor *out, unsigned int max_out,
				     unsigned int *count)
{
	if ((!buf && len) || (!out && max_out) || !count)
		return SD_CORE_E_INVALID_ARGUMENT;
	*count = 0;
	const ByteSpan in(buf, len);
	if (len % SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE)
		return SD_CORE_E_TRUNCATED;
	const u32 n = len / SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE;
	if (n > max_out)
		return SD_CORE_E_BUFFER_TOO_SMALL;
	for (u32 i = 0; i < n; i++) {
		const auto d = decode_buffer_descriptor(in.sub(
			i * SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE, SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE));
		if (!d.ok())
			return to_c(d.error());
		out[i].offset = d.value().offset;
		out[i].token = d.value().token;
		out[i].length = d.value().length;
	}
	*count = n;
	return SD_CORE_OK;
}

} // extern "C"

static_assert(sizeof(sd_core_conn) == SD_CORE_CONN_SIZE);
static_assert(alignof(sd_core_conn) >= SD_CORE_CONN_ALIGN);
