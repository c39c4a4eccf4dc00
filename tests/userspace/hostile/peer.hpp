// SPDX-License-Identifier: GPL-2.0
//
// The hostile peer's transport: one RC connection through librdmacm and
// libibverbs, as client or server, that sends whatever bytes it is given.
// It keeps no SMB-Direct state; the cases do their own credit accounting
// (or break it on purpose).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <sys/socket.h>
#include <vector>

namespace hp
{

// "" is success; anything else says what went wrong.
using Err = std::string;

long now_ms();

struct Received {
	std::vector<uint8_t> bytes;
};

class Peer {
    public:
	static constexpr int nrecv = 64;
	static constexpr uint32_t slot = 8192; // receive and send slot size
	static constexpr int nsend = 64;
	static constexpr uint32_t rdma_area = 64 * 1024;

	Peer() = default;
	Peer(const Peer &) = delete;
	Peer &operator=(const Peer &) = delete;
	~Peer();

	// Client: resolve, connect, wait for ESTABLISHED.
	Err connect(const sockaddr *dst, int timeout_ms);
	// Server: bind and listen on addr (port included).
	Err listen(const sockaddr *addr);
	// Server: take the next CONNECT_REQUEST, accept it, wait for ESTABLISHED.
	Err accept(int timeout_ms);

	// Posts one SEND of these bytes (signaled) and returns at once.
	Err post_send(const std::vector<uint8_t> &b);
	// Posts and waits for the SEND's completion: "" when it succeeded,
	// else the work completion's status.
	Err send(const std::vector<uint8_t> &b, int timeout_ms);
	// Waits for the next received message (reposting its buffer).
	// Empty optional-like: returns false on timeout or error (in *why).
	bool recv(Received &r, int timeout_ms, Err *why = nullptr);
	// RDMA READ/WRITE of len bytes at rdma_area offset 0 against the
	// peer's (addr, rkey); returns the completion status ("" success).
	Err rdma(bool write, uint64_t addr, uint32_t rkey, uint32_t len, int timeout_ms);
	uint8_t *rdma_buf()
	{
		return mem_ + (nrecv + nsend) * slot;
	}
	// A buffer of len bytes, filled with fill, that the victim may RDMA
	// READ and WRITE (as a client offers one for an SMB2 WRITE or READ);
	// its address and rkey in *addr and *rkey. One at a time.
	Err expose(size_t len, uint8_t fill, uint64_t *addr, uint32_t *rkey);
	uint8_t *exposed()
	{
		return exposed_;
	}
	// Deregisters the exposed buffer: the victim's accesses fail from now
	// on (a token invalidated under a transfer). The memory stays mapped.
	void unexpose();

	// Waits for a CM event of this type on the connection; other events
	// are recorded. Returns "" when it came.
	Err wait_event(rdma_cm_event_type type, int timeout_ms);
	// Waits for the peer's disconnect, a REJ included (sent for a
	// disconnect before the victim saw the connection established); another
	// error event fails the wait.
	Err wait_disconnect(int timeout_ms)
	{
		return wait_event(RDMA_CM_EVENT_DISCONNECTED, timeout_ms);
	}
	bool disconnected() const
	{
		return disconnected_;
	}
	void disconnect();
	uint16_t src_port() const; // host order
	int send_errors() const
	{
		return send_errors_;
	}
	std::string last_events() const
	{
		return events_;
	}

    private:
	Err setup_qp(rdma_cm_id *id);
	Err post_recv(int i);
	Err next_event(rdma_cm_event_type &type, rdma_cm_id *&id, int &status, int timeout_ms,
		       rdma_conn_param *param = nullptr);
	Err poll_cq(int timeout_ms, bool want_recv, uint64_t want_wr, ibv_wc &out);

	rdma_event_channel *ch_ = nullptr;
	rdma_cm_id *listen_id_ = nullptr;
	rdma_cm_id *id_ = nullptr;
	ibv_pd *pd_ = nullptr;
	ibv_comp_channel *cc_ = nullptr;
	ibv_cq *cq_ = nullptr;
	unsigned int cq_events_ = 0; // to acknowledge before destroying the CQ
	ibv_mr *mr_ = nullptr;
	uint8_t *mem_ = nullptr;
	size_t mem_len_ = 0;
	bool qp_ = false;
	bool disconnected_ = false;
	int send_next_ = 0;
	uint64_t wr_seq_ = 0;
	int send_errors_ = 0;
	std::deque<Received> inbox_;
	uint8_t *exposed_ = nullptr;
	size_t exposed_len_ = 0;
	ibv_mr *exposed_mr_ = nullptr;
	std::vector<uint64_t> done_wr_; // send/rdma completions seen while waiting for others
	std::vector<std::pair<uint64_t, int>> failed_wr_;
	std::string events_;
};

// Many half-open connections on one event channel: rdma_cm connects, no
// SMB-Direct byte is ever sent. Counts what the listener does with them.
class Flood {
    public:
	~Flood();
	// Starts connections until n were started (a second call goes on),
	// at most window of them in setup at once; returns once all are
	// established or refused, or at the deadline.
	Err start(const sockaddr *dst, int n, int window, int timeout_ms);
	// Waits until every established one was disconnected by the listener.
	Err wait_all_disconnected(int timeout_ms);
	int established = 0, rejected = 0, failed = 0, disconnected = 0;
	std::map<std::string, int> why; // failures by event and status, or call and errno

    private:
	void handle(rdma_cm_event *ev);
	void reap(); // destroys the connections the listener dropped
	std::vector<rdma_cm_id *> dead_;
	int started_ = 0;
	rdma_event_channel *ch_ = nullptr;
	std::vector<rdma_cm_id *> ids_;
	ibv_pd *pd_ = nullptr;
	ibv_cq *cq_ = nullptr;
	ibv_context *ctx_ = nullptr;
};

} // namespace hp
