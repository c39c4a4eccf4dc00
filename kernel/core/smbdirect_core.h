/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole interface between the C glue and the freestanding C++
 * SMB-Direct protocol core. Only plain-old-data crosses it. Included by
 * kernel C (gnu11), kernel C++ and host C++; it includes nothing.
 *
 * Calling contract (see Documentation/core.rst for the longer version):
 *
 * - The core is sans-I/O. It owns no memory, takes no lock and reads no
 *   clock. The glue embeds one struct sd_core_conn per connection,
 *   serialises every call on it (one lock or one context), and passes the
 *   current time in milliseconds (any monotonic origin) where asked.
 * - Every event function fills a struct sd_core_actions that the glue must
 *   carry out in this order: DELIVER, REPOST, SEND, ARM_TIMER, DISCONNECT.
 * - Receive buffers are max_receive_size bytes each and owned by the glue.
 *   It posts them (before connecting, too) and reports each post with
 *   sd_core_recv_posted(); it reports each receive completion with
 *   sd_core_on_recv(). A buffer whose data was delivered is reposted after
 *   the reader consumed the data; any other buffer may be reposted at once
 *   (actions.repost counts those). Credits granted to the peer never exceed
 *   the receives the glue has reported as posted.
 * - SEND means: call sd_core_next_pdu() with a free send buffer until it
 *   returns SD_CORE_E_AGAIN. Each produced PDU is posted as one RDMA send.
 * - Upper-layer messages are sent one at a time: sd_core_send_message()
 *   announces one, sd_core_next_pdu() fragments it. SOCK_SEQPACKET maps one
 *   sendmsg to one message; SOCK_STREAM feeds the user's bytes through
 *   sd_core_stream_parse() to find the 4-byte big-endian length prefixes
 *   and prefixes delivered messages with sd_core_stream_prefix().
 */
#ifndef SMBDIRECT_CORE_H
#define SMBDIRECT_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to this header. */
#define SD_CORE_ABI_VERSION 2

/* Returns SD_CORE_ABI_VERSION as compiled into the core. */
int sd_core_abi_version(void);

/* Wire constants ([MS-SMBD] 2.2). */
#define SD_CORE_VERSION_1 0x0100
#define SD_CORE_NEGOTIATE_REQUEST_SIZE 20
#define SD_CORE_NEGOTIATE_RESPONSE_SIZE 32
#define SD_CORE_DATA_HEADER_MIN_SIZE 20
#define SD_CORE_DATA_HEADER_SIZE 24
#define SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE 16
#define SD_CORE_MIN_FRAGMENTED_SIZE 131072
/*
 * The largest message we send, whatever MaxFragmentedSize the peer
 * advertises (it may say 0xFFFFFFFF): the effective max_fragmented_send_size
 * is the smaller of the two, so one send never stages more than this.
 */
#define SD_CORE_MAX_FRAGMENTED_SEND_SIZE 16777216u
#define SD_CORE_MIN_RECEIVE_SIZE 128
#define SD_CORE_FLAG_RESPONSE_REQUESTED 0x0001
#define SD_CORE_STATUS_SUCCESS 0x00000000u
#define SD_CORE_STATUS_NOT_SUPPORTED 0xC00000BBu
#define SD_CORE_STATUS_INVALID_PARAMETER 0xC000000Du
#define SD_CORE_STREAM_PREFIX_SIZE 4

/*
 * Every failure has its own code so a test (or a trace) can tell which
 * rule rejected an input. Functions return 0 or one of these, positive.
 */
enum sd_core_errc {
	SD_CORE_OK = 0,
	SD_CORE_E_AGAIN = 1, /* nothing to produce now (no data or credit) */
	SD_CORE_E_INVALID_ARGUMENT = 2, /* caller passed an unusable value */
	SD_CORE_E_BAD_STATE = 3, /* event not valid in this state */
	SD_CORE_E_BUFFER_TOO_SMALL = 4, /* caller's output buffer */
	SD_CORE_E_TRUNCATED = 5, /* fewer bytes than the PDU's header */
	SD_CORE_E_PDU_TOO_LONG = 6, /* more than our max receive size */
	SD_CORE_E_VERSION = 7, /* 0x0100 outside [min, max], or not chosen */
	SD_CORE_E_ZERO_CREDITS_REQUESTED = 8,
	SD_CORE_E_ZERO_CREDITS_GRANTED = 9,
	SD_CORE_E_FRAGMENTED_SIZE_TOO_SMALL = 10, /* < 131072 */
	SD_CORE_E_RECEIVE_SIZE_TOO_SMALL = 11, /* < 128 */
	SD_CORE_E_SEND_SIZE_EXCEEDS_RECEIVE = 12, /* response vs our request */
	SD_CORE_E_PEER_STATUS = 13, /* negotiate response status != 0 */
	SD_CORE_E_DATA_OFFSET_ALIGNMENT = 14, /* DataOffset not 8-aligned */
	SD_CORE_E_DATA_OFFSET_RANGE = 15, /* DataOffset inside the header */
	SD_CORE_E_DATA_OUT_OF_BOUNDS = 16, /* offset + length > received */
	SD_CORE_E_REMAINING_MISMATCH = 17, /* fragments disagree */
	SD_CORE_E_MESSAGE_TOO_LONG = 18, /* > MaxFragmentedSize */
	SD_CORE_E_EMPTY_FRAGMENT = 19, /* no data but more to follow */
	SD_CORE_E_NO_CREDIT = 20, /* peer sent without holding a credit */
	SD_CORE_E_CREDIT_OVERFLOW = 21, /* grants beyond 65535 */
	SD_CORE_E_EMPTY_MESSAGE = 22, /* zero-length upper-layer message */
	SD_CORE_E_BUSY = 23, /* a message is still being sent */
	SD_CORE_E_NO_RECEIVE_POSTED = 24, /* completion without a post */
	SD_CORE_E_TOO_MANY_RECEIVES = 25, /* more posts than receive_credit_max */
	SD_CORE_E_CONFIG = 26, /* local configuration out of range */
	SD_CORE_E_COUNT
};

enum sd_core_role {
	SD_CORE_ROLE_CLIENT = 0, /* active side: sends the negotiate request */
	SD_CORE_ROLE_SERVER = 1, /* passive side: answers it */
};

enum sd_core_reason {
	SD_CORE_REASON_NONE = 0,
	SD_CORE_REASON_LOCAL = 1, /* sd_core_disconnect() */
	SD_CORE_REASON_PEER = 2, /* the transport went away */
	SD_CORE_REASON_NEGOTIATE_TIMEOUT = 3,
	SD_CORE_REASON_KEEPALIVE_TIMEOUT = 4,
	SD_CORE_REASON_PROTOCOL_ERROR = 5, /* actions.error says which rule */
	SD_CORE_REASON_NEGOTIATE_REJECTED = 6, /* either side said no */
};

/* Local settings, fixed before connecting. */
struct sd_core_config {
	unsigned int role; /* enum sd_core_role */
	unsigned int receive_credit_max; /* receive buffers the glue owns */
	unsigned int send_credit_target; /* CreditsRequested we send */
	unsigned int max_send_size; /* bytes per send, header included */
	unsigned int max_receive_size; /* bytes per receive buffer */
	unsigned int max_fragmented_size; /* largest message we accept */
	unsigned int max_read_write_size; /* RDMA read/write bound offered */
	unsigned int keepalive_interval_ms; /* idle time before probing; 0 off */
	unsigned int keepalive_timeout_ms; /* wait for an answer to a probe */
	unsigned int negotiate_timeout_ms; /* connected -> negotiated */
};

/* Fills the field-proven defaults (ksmbd/cifs: 255 credits, 1364 bytes). */
void sd_core_config_default(struct sd_core_config *cfg, unsigned int role);

/* The effective parameters once negotiated (actions.flags ESTABLISHED). */
struct sd_core_params {
	unsigned int version;
	unsigned int max_send_size; /* min(ours, peer's MaxReceiveSize) */
	unsigned int max_receive_size; /* min(ours, peer's PreferredSendSize) */
	unsigned int max_fragmented_send_size; /* the peer's limit */
	unsigned int max_fragmented_receive_size; /* ours */
	unsigned int max_read_write_size;
	unsigned int receive_credit_target; /* credits we keep the peer at */
	unsigned int peer_credit_target; /* CreditsRequested of the peer */
};

#define SD_CORE_CONN_SIZE 256
#define SD_CORE_CONN_ALIGN 8

/*
 * Opaque engine storage; the C++ side static_asserts that it fits. The
 * alignment is explicit: i386 aligns a long long to 4 only.
 */
#ifdef __cplusplus
#define SD_CORE_CONN_ALIGNED alignas(SD_CORE_CONN_ALIGN)
#else /* the kernel's C, where <linux/compiler_attributes.h> has __aligned */
#define SD_CORE_CONN_ALIGNED __aligned(SD_CORE_CONN_ALIGN)
#endif
struct sd_core_conn {
	SD_CORE_CONN_ALIGNED unsigned long long opaque[SD_CORE_CONN_SIZE / 8];
};

/* What the glue must do after an event, in field order. */
#define SD_CORE_ACT_DELIVER 0x01u
#define SD_CORE_ACT_REPOST 0x02u
#define SD_CORE_ACT_SEND 0x04u
#define SD_CORE_ACT_ARM_TIMER 0x08u
#define SD_CORE_ACT_DISCONNECT 0x10u
#define SD_CORE_ACT_ESTABLISHED 0x20u

#define SD_CORE_DELIVER_FIRST 0x1u /* first slice of a message */
#define SD_CORE_DELIVER_LAST 0x2u /* message complete after this slice */

struct sd_core_actions {
	unsigned int flags; /* SD_CORE_ACT_* */
	/* DELIVER: bytes [offset, offset + length) of the received buffer. */
	unsigned int deliver_offset;
	unsigned int deliver_length;
	unsigned int deliver_flags; /* SD_CORE_DELIVER_* */
	unsigned int message_length; /* total length of that message */
	/* REPOST: receive buffers that may be posted again right now. */
	unsigned int repost;
	/* ARM_TIMER: absolute deadline, same clock as now_ms. */
	unsigned long long timer_deadline_ms;
	/* DISCONNECT: enum sd_core_reason and, if a rule broke, its errc. */
	int disconnect_reason;
	int error;
};

#define SD_CORE_PDU_NEGOTIATE_REQUEST 1
#define SD_CORE_PDU_NEGOTIATE_RESPONSE 2
#define SD_CORE_PDU_DATA 3 /* carries message payload */
#define SD_CORE_PDU_CREDIT 4 /* empty: grants credits / answers a probe */
#define SD_CORE_PDU_KEEPALIVE 5 /* empty with RESPONSE_REQUESTED */

/*
 * A produced PDU. The core wrote the header into the send buffer; for DATA
 * the glue copies payload_length bytes of the current message, starting at
 * message_offset, to buffer + payload_offset, and posts length bytes.
 */
struct sd_core_pdu {
	unsigned int kind; /* SD_CORE_PDU_* */
	unsigned int length;
	unsigned int payload_offset;
	unsigned int payload_length;
	unsigned int message_offset;
	unsigned int message_last; /* 1 when this completes the message */
	unsigned int credits_granted;
	unsigned int flags; /* wire flags */
};

/* Validates cfg and initialises the engine; no other call before this. */
int sd_core_conn_init(struct sd_core_conn *conn, const struct sd_core_config *cfg);

/*
 * The glue posted n more receive buffers (initially, and after each
 * repost). May ask to SEND a credit-only message to a starved peer.
 */
int sd_core_recv_posted(struct sd_core_conn *conn, unsigned int n, struct sd_core_actions *act);

/* The RDMA connection is established (rdma_cm ESTABLISHED). */
int sd_core_on_connected(struct sd_core_conn *conn, unsigned long long now_ms,
			 struct sd_core_actions *act);

/*
 * A receive completed with len bytes in buf (one posted buffer consumed).
 * A non-zero return means the PDU broke a rule; act says DISCONNECT, or for
 * a server refusing a negotiate request, SEND the refusal first (DISCONNECT
 * follows from sd_core_on_send_complete()). A server may see the negotiate
 * request before rdma_cm reports ESTABLISHED; that is accepted.
 */
int sd_core_on_recv(struct sd_core_conn *conn, unsigned long long now_ms,
		    const unsigned char *buf, unsigned int len, struct sd_core_actions *act);

/* n sends completed (successfully) on the send queue. */
int sd_core_on_send_complete(struct sd_core_conn *conn, unsigned int n,
			     struct sd_core_actions *act);

/* The timer armed by ARM_TIMER fired (early or stale firings are fine). */
int sd_core_on_timer(struct sd_core_conn *conn, unsigned long long now_ms,
		     struct sd_core_actions *act);

/* The user wants to send one message of length bytes. */
int sd_core_send_message(struct sd_core_conn *conn, unsigned int length,
			 struct sd_core_actions *act);

/*
 * Produces the next PDU into buf (cap bytes, at least the send size).
 * avail: payload bytes of the current message the glue can supply from
 * message_offset on (the whole rest for SOCK_SEQPACKET). Returns
 * SD_CORE_E_AGAIN when nothing can be sent now.
 */
int sd_core_next_pdu(struct sd_core_conn *conn, unsigned char *buf, unsigned int cap,
		     unsigned int avail, struct sd_core_pdu *pdu);

/* sd_core_next_pdu() copying the payload from the contiguous message msg. */
int sd_core_next_pdu_copy(struct sd_core_conn *conn, unsigned char *buf, unsigned int cap,
			  const unsigned char *msg, unsigned int msg_len,
			  struct sd_core_pdu *pdu);

/* Local close or transport loss; the engine accepts nothing afterwards. */
int sd_core_disconnect(struct sd_core_conn *conn, int reason, struct sd_core_actions *act);

/* Negotiated parameters; SD_CORE_E_BAD_STATE before ESTABLISHED. */
int sd_core_get_params(const struct sd_core_conn *conn, struct sd_core_params *out);

/* Introspection for tests, tracing and GET_PARAMS. */
struct sd_core_stats {
	unsigned int state;
	unsigned int send_credits; /* credits we hold */
	unsigned int peer_credits; /* credits the peer holds from us */
	unsigned int receives_posted;
	unsigned int sends_in_flight;
	unsigned int message_pending; /* bytes of the current outgoing message left */
};

void sd_core_get_stats(const struct sd_core_conn *conn, struct sd_core_stats *out);

/* SOCK_STREAM framing: 4-byte big-endian length before every message. */
struct sd_core_stream_parser {
	unsigned int max_message;
	unsigned int prefix_have;
	unsigned int remaining;
	unsigned char prefix[4];
};

struct sd_core_stream_chunk {
	unsigned int consumed; /* input bytes used by this call */
	unsigned int message_start; /* 1: a prefix completed in this call */
	unsigned int message_length; /* valid with message_start */
	unsigned int payload_offset; /* payload slice within the input */
	unsigned int payload_length;
	unsigned int message_end; /* 1: the payload slice ends the message */
};

void sd_core_stream_parser_init(struct sd_core_stream_parser *p, unsigned int max_message);

/* Consumes input up to the end of at most one message's payload. */
int sd_core_stream_parse(struct sd_core_stream_parser *p, const unsigned char *data,
			 unsigned int len, struct sd_core_stream_chunk *out);

/* Writes the 4-byte prefix for a delivered message of length bytes. */
void sd_core_stream_prefix(unsigned int length, unsigned char out[4]);

/* Buffer Descriptor V1, for SMB2 READ/WRITE channel info. */
struct sd_core_buffer_descriptor {
	unsigned long long offset;
	unsigned int token;
	unsigned int length;
};

int sd_core_buffer_descriptor_encode(const struct sd_core_buffer_descriptor *d,
				     unsigned char *buf, unsigned int cap);
/* Decodes count descriptors from buf; rejects partial descriptors. */
int sd_core_buffer_descriptor_decode(const unsigned char *buf, unsigned int len,
				     struct sd_core_buffer_descriptor *out, unsigned int max_out,
				     unsigned int *count);

#ifdef __cplusplus
}
#endif

#endif /* SMBDIRECT_CORE_H */
