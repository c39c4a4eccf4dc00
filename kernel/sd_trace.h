/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of af_smbdirect (tracefs: events/af_smbdirect/). Each names
 * its socket by address (skaddr, hashed by %p as in the tcp events):
 * state changes and failures with their errno, the negotiated parameters,
 * every PDU sent and received, whole messages delivered, credit stalls,
 * registrations, remote invalidations, and RDMA reads and writes from
 * issue to completion.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM af_smbdirect

#if !defined(_SD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SD_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(af_smbdirect_state,
	    TP_PROTO(const void *sk, int old, int new),
	    TP_ARGS(sk, old, new),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, old)
			     __field(int, new)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("skaddr=%p old=%s new=%s", __entry->skaddr,
		      __print_symbolic(__entry->old, { 0, "unconnected" },
				       { 1, "listening" }, { 2, "connecting" },
				       { 3, "connected" }, { 4, "closed" }),
		      __print_symbolic(__entry->new, { 0, "unconnected" },
				       { 1, "listening" }, { 2, "connecting" },
				       { 3, "connected" }, { 4, "closed" }))
);

/* The connection is over: err is -errno, 0 when orderly. */
TRACE_EVENT(af_smbdirect_fail,
	    TP_PROTO(const void *sk, int err),
	    TP_ARGS(sk, err),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, err)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->err = err;),
	    TP_printk("skaddr=%p err=%d", __entry->skaddr, __entry->err)
);

TRACE_EVENT(af_smbdirect_negotiated,
	    TP_PROTO(const void *sk, u32 version, u32 send_size, u32 recv_size,
		     u32 frag_send, u32 frag_recv, u32 rw_size, u32 credit_target,
		     u32 credit_max, u32 keepalive),
	    TP_ARGS(sk, version, send_size, recv_size, frag_send, frag_recv,
		    rw_size, credit_target, credit_max, keepalive),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, version)
			     __field(u32, send_size)
			     __field(u32, recv_size)
			     __field(u32, frag_send)
			     __field(u32, frag_recv)
			     __field(u32, rw_size)
			     __field(u32, credit_target)
			     __field(u32, credit_max)
			     __field(u32, keepalive)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->version = version;
			   __entry->send_size = send_size;
			   __entry->recv_size = recv_size;
			   __entry->frag_send = frag_send;
			   __entry->frag_recv = frag_recv;
			   __entry->rw_size = rw_size;
			   __entry->credit_target = credit_target;
			   __entry->credit_max = credit_max;
			   __entry->keepalive = keepalive;),
	    TP_printk("skaddr=%p version=0x%x max_send_size=%u max_receive_size=%u max_fragmented_send_size=%u max_fragmented_receive_size=%u max_read_write_size=%u send_credit_target=%u receive_credit_target=%u keepalive_interval=%u",
		      __entry->skaddr, __entry->version, __entry->send_size,
		      __entry->recv_size, __entry->frag_send, __entry->frag_recv,
		      __entry->rw_size, __entry->credit_target,
		      __entry->credit_max, __entry->keepalive)
);

/*
 * kind: the core's SD_CORE_PDU_*: 1 negotiate request, 2 negotiate
 * response, 3 data, 4 credits only (or an answer), 5 keepalive probe.
 */
DECLARE_EVENT_CLASS(af_smbdirect_pdu_class,
		    TP_PROTO(const void *sk, u32 kind, u32 length, u32 data_length,
			     u32 credits_granted, u32 flags),
		    TP_ARGS(sk, kind, length, data_length, credits_granted, flags),
		    TP_STRUCT__entry(__field(const void *, skaddr)
				     __field(u32, kind)
				     __field(u32, length)
				     __field(u32, data_length)
				     __field(u32, credits_granted)
				     __field(u32, flags)),
		    TP_fast_assign(__entry->skaddr = sk;
				   __entry->kind = kind;
				   __entry->length = length;
				   __entry->data_length = data_length;
				   __entry->credits_granted = credits_granted;
				   __entry->flags = flags;),
		    TP_printk("skaddr=%p kind=%u length=%u data_length=%u credits_granted=%u flags=0x%x",
			      __entry->skaddr, __entry->kind, __entry->length,
			      __entry->data_length, __entry->credits_granted,
			      __entry->flags)
);

DEFINE_EVENT(af_smbdirect_pdu_class, af_smbdirect_pdu_send,
	     TP_PROTO(const void *sk, u32 kind, u32 length, u32 data_length,
		      u32 credits_granted, u32 flags),
	     TP_ARGS(sk, kind, length, data_length, credits_granted, flags));

     /* After the core took it: the credits each side then holds. */
TRACE_EVENT(af_smbdirect_pdu_recv,
	    TP_PROTO(const void *sk, u32 length, u32 data_length, u32 send_credits,
		     u32 peer_credits),
	    TP_ARGS(sk, length, data_length, send_credits, peer_credits),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, length)
			     __field(u32, data_length)
			     __field(u32, send_credits)
			     __field(u32, peer_credits)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->length = length;
			   __entry->data_length = data_length;
			   __entry->send_credits = send_credits;
			   __entry->peer_credits = peer_credits;),
	    TP_printk("skaddr=%p length=%u data_length=%u send_credits=%u peer_credits=%u",
		      __entry->skaddr, __entry->length, __entry->data_length,
		      __entry->send_credits, __entry->peer_credits)
);

TRACE_EVENT(af_smbdirect_message,
	    TP_PROTO(const void *sk, u32 length, unsigned int queued),
	    TP_ARGS(sk, length, queued),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, length)
			     __field(unsigned int, queued)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->length = length;
			   __entry->queued = queued;),
	    TP_printk("skaddr=%p length=%u rx_queued=%u", __entry->skaddr,
		      __entry->length, __entry->queued)
);

/* A sender waits: no credit it may spend, or the send buffer is full. */
TRACE_EVENT(af_smbdirect_send_stall,
	    TP_PROTO(const void *sk, u32 send_credits, unsigned int tx_queued),
	    TP_ARGS(sk, send_credits, tx_queued),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, send_credits)
			     __field(unsigned int, tx_queued)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->send_credits = send_credits;
			   __entry->tx_queued = tx_queued;),
	    TP_printk("skaddr=%p send_credits=%u tx_queued=%u", __entry->skaddr,
		      __entry->send_credits, __entry->tx_queued)
);

DECLARE_EVENT_CLASS(af_smbdirect_reg_class,
		    TP_PROTO(const void *sk, u64 id, u64 bytes, u32 mrs, u32 flags, int err),
		    TP_ARGS(sk, id, bytes, mrs, flags, err),
		    TP_STRUCT__entry(__field(const void *, skaddr)
				     __field(u64, id)
				     __field(u64, bytes)
				     __field(u32, mrs)
				     __field(u32, flags)
				     __field(int, err)),
		    TP_fast_assign(__entry->skaddr = sk;
				   __entry->id = id;
				   __entry->bytes = bytes;
				   __entry->mrs = mrs;
				   __entry->flags = flags;
				   __entry->err = err;),
		    TP_printk("skaddr=%p id=%llu bytes=%llu mrs=%u flags=0x%x err=%d",
			      __entry->skaddr, __entry->id, __entry->bytes, __entry->mrs,
			      __entry->flags, __entry->err)
);

/* flags: the registration's SMBDIRECT_ACCESS_*; err: REGISTER's result. */
DEFINE_EVENT(af_smbdirect_reg_class, af_smbdirect_register,
	     TP_PROTO(const void *sk, u64 id, u64 bytes, u32 mrs, u32 flags, int err),
	     TP_ARGS(sk, id, bytes, mrs, flags, err));

     /* flags: SMBDIRECT_DEREG_* state reported to the caller. */
DEFINE_EVENT(af_smbdirect_reg_class, af_smbdirect_deregister,
	     TP_PROTO(const void *sk, u64 id, u64 bytes, u32 mrs, u32 flags, int err),
	     TP_ARGS(sk, id, bytes, mrs, flags, err));

TRACE_EVENT(af_smbdirect_remote_invalidate,
	    TP_PROTO(const void *sk, u32 token, bool ours),
	    TP_ARGS(sk, token, ours),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, token)
			     __field(bool, ours)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->token = token;
			   __entry->ours = ours;),
	    TP_printk("skaddr=%p token=0x%x issued_by_us=%d", __entry->skaddr,
		      __entry->token, __entry->ours)
);

DECLARE_EVENT_CLASS(af_smbdirect_rw_class,
		    TP_PROTO(const void *sk, bool read, u64 bytes, u32 descs, int err),
		    TP_ARGS(sk, read, bytes, descs, err),
		    TP_STRUCT__entry(__field(const void *, skaddr)
				     __field(bool, read)
				     __field(u64, bytes)
				     __field(u32, descs)
				     __field(int, err)),
		    TP_fast_assign(__entry->skaddr = sk;
				   __entry->read = read;
				   __entry->bytes = bytes;
				   __entry->descs = descs;
				   __entry->err = err;),
		    TP_printk("skaddr=%p op=%s bytes=%llu descriptors=%u err=%d",
			      __entry->skaddr, __entry->read ? "read" : "write",
			      __entry->bytes, __entry->descs, __entry->err)
);

/* bytes: what the call asks for. */
DEFINE_EVENT(af_smbdirect_rw_class, af_smbdirect_rdma_issue,
	     TP_PROTO(const void *sk, bool read, u64 bytes, u32 descs, int err),
	     TP_ARGS(sk, read, bytes, descs, err));

     /* bytes: what moved; err: the call's result. */
DEFINE_EVENT(af_smbdirect_rw_class, af_smbdirect_rdma_done,
	     TP_PROTO(const void *sk, bool read, u64 bytes, u32 descs, int err),
	     TP_ARGS(sk, read, bytes, descs, err));

#endif /* _SD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sd_trace
#include <trace/define_trace.h>
