// SPDX-License-Identifier: GPL-2.0
#include "peer.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

namespace hp
{

long now_ms()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

namespace
{

constexpr uint64_t recv_tag = 1ULL << 40;

std::string errstr(const char *what)
{
	return std::string(what) + ": " + strerror(errno);
}

} // namespace

Peer::~Peer()
{
	if (id_ && qp_)
		rdma_destroy_qp(id_);
	if (mr_)
		ibv_dereg_mr(mr_);
	unexpose();
	if (exposed_)
		munmap(exposed_, exposed_len_);
	if (cq_) {
		if (cq_events_)
			ibv_ack_cq_events(cq_, cq_events_);
		ibv_destroy_cq(cq_);
	}
	if (cc_)
		ibv_destroy_comp_channel(cc_);
	if (pd_)
		ibv_dealloc_pd(pd_);
	if (id_)
		rdma_destroy_id(id_);
	if (listen_id_)
		rdma_destroy_id(listen_id_);
	if (ch_)
		rdma_destroy_event_channel(ch_);
	if (mem_)
		munmap(mem_, mem_len_);
}

Err Peer::next_event(rdma_cm_event_type &type, rdma_cm_id *&id, int &status, int timeout_ms,
		     rdma_conn_param *param)
{
	long deadline = now_ms() + timeout_ms;
	for (;;) {
		rdma_cm_event *ev;
		if (rdma_get_cm_event(ch_, &ev) == 0) {
			type = ev->event;
			id = ev->id;
			status = ev->status;
			if (param && (type == RDMA_CM_EVENT_CONNECT_REQUEST))
				*param = ev->param.conn;
			events_ += std::string(events_.empty() ? "" : ",") + rdma_event_str(type);
			if (type == RDMA_CM_EVENT_DISCONNECTED)
				disconnected_ = true;
			rdma_ack_cm_event(ev);
			return "";
		}
		if (errno != EAGAIN)
			return errstr("rdma_get_cm_event");
		long left = deadline - now_ms();
		if (left <= 0)
			return "no CM event in " + std::to_string(timeout_ms) + " ms";
		pollfd p{ ch_->fd, POLLIN, 0 };
		poll(&p, 1, (int)std::min(left, 100L));
	}
}

Err Peer::wait_event(rdma_cm_event_type want, int timeout_ms)
{
	if (want == RDMA_CM_EVENT_DISCONNECTED && disconnected_)
		return "";
	long deadline = now_ms() + timeout_ms;
	for (;;) {
		rdma_cm_event_type t;
		rdma_cm_id *id;
		int st;
		long left = deadline - now_ms();
		Err e = next_event(t, id, st, (int)std::max(left, 1L));
		if (!e.empty())
			return "waiting for " + std::string(rdma_event_str(want)) + ": " + e +
			       " (events: " + events_ + ")";
		if (t == want)
			return "";
		// A disconnect before the passive side saw the connection
		// established goes out as a REJ: the victim ended it all the same.
		if (want == RDMA_CM_EVENT_DISCONNECTED && t == RDMA_CM_EVENT_REJECTED) {
			disconnected_ = true;
			return "";
		}
		// A connection refused or broken ends any wait for progress.
		if (t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_CONNECT_ERROR ||
		    t == RDMA_CM_EVENT_UNREACHABLE || t == RDMA_CM_EVENT_ADDR_ERROR ||
		    t == RDMA_CM_EVENT_ROUTE_ERROR ||
		    (t == RDMA_CM_EVENT_DISCONNECTED && want != RDMA_CM_EVENT_DISCONNECTED))
			return std::string(rdma_event_str(t)) + " (status " + std::to_string(st) +
			       ") while waiting for " + rdma_event_str(want);
	}
}

Err Peer::setup_qp(rdma_cm_id *id)
{
	pd_ = ibv_alloc_pd(id->verbs);
	if (!pd_)
		return errstr("ibv_alloc_pd");
	// Waits sleep in poll() on the channel, not in a polling loop: under
	// TCG a loop eats the CPU the victim needs.
	cc_ = ibv_create_comp_channel(id->verbs);
	if (!cc_)
		return errstr("ibv_create_comp_channel");
	fcntl(cc_->fd, F_SETFL, fcntl(cc_->fd, F_GETFL) | O_NONBLOCK);
	cq_ = ibv_create_cq(id->verbs, nrecv + nsend + 16, nullptr, cc_, 0);
	if (!cq_)
		return errstr("ibv_create_cq");
	mem_len_ = (nrecv + nsend) * slot + rdma_area;
	void *m =
		mmap(nullptr, mem_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return errstr("mmap");
	mem_ = static_cast<uint8_t *>(m);
	mr_ = ibv_reg_mr(pd_, mem_, mem_len_, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_)
		return errstr("ibv_reg_mr");
	ibv_qp_init_attr a{};
	a.send_cq = cq_;
	a.recv_cq = cq_;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = nsend;
	a.cap.max_recv_wr = nrecv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	if (rdma_create_qp(id, pd_, &a))
		return errstr("rdma_create_qp");
	qp_ = true;
	for (int i = 0; i < nrecv; i++) {
		Err e = post_recv(i);
		if (!e.empty())
			return e;
	}
	return "";
}

Err Peer::post_recv(int i)
{
	ibv_sge sge{ (uintptr_t)(mem_ + i * slot), slot, mr_->lkey };
	ibv_recv_wr wr{}, *bad;
	wr.wr_id = recv_tag | (uint64_t)i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(id_->qp, &wr, &bad))
		return errstr("ibv_post_recv");
	return "";
}

static void conn_param(rdma_conn_param &p)
{
	memset(&p, 0, sizeof(p));
	p.initiator_depth = 1;
	p.responder_resources = 1;
	p.retry_count = 6;
	p.rnr_retry_count = 3;
}

Err Peer::connect(const sockaddr *dst, int timeout_ms)
{
	ch_ = rdma_create_event_channel();
	if (!ch_)
		return errstr("rdma_create_event_channel");
	fcntl(ch_->fd, F_SETFL, fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_create_id(ch_, &id_, this, RDMA_PS_TCP))
		return errstr("rdma_create_id");
	if (rdma_resolve_addr(id_, nullptr, const_cast<sockaddr *>(dst), 2000))
		return errstr("rdma_resolve_addr");
	Err e = wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms);
	if (!e.empty())
		return e;
	if (rdma_resolve_route(id_, 2000))
		return errstr("rdma_resolve_route");
	if (!(e = wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms)).empty())
		return e;
	if (!(e = setup_qp(id_)).empty())
		return e;
	rdma_conn_param p;
	conn_param(p);
	if (rdma_connect(id_, &p))
		return errstr("rdma_connect");
	return wait_event(RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
}

Err Peer::listen(const sockaddr *addr)
{
	ch_ = rdma_create_event_channel();
	if (!ch_)
		return errstr("rdma_create_event_channel");
	fcntl(ch_->fd, F_SETFL, fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_create_id(ch_, &listen_id_, this, RDMA_PS_TCP))
		return errstr("rdma_create_id");
	if (rdma_bind_addr(listen_id_, const_cast<sockaddr *>(addr)))
		return errstr("rdma_bind_addr");
	if (rdma_listen(listen_id_, 8))
		return errstr("rdma_listen");
	return "";
}

Err Peer::accept(int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	for (;;) {
		rdma_cm_event_type t;
		rdma_cm_id *id;
		int st;
		Err e = next_event(t, id, st, (int)std::max(deadline - now_ms(), 1L));
		if (!e.empty())
			return "waiting for a connect request: " + e;
		if (t != RDMA_CM_EVENT_CONNECT_REQUEST)
			continue;
		id_ = id;
		if (!(e = setup_qp(id_)).empty())
			return e;
		rdma_conn_param p;
		conn_param(p);
		if (rdma_accept(id_, &p))
			return errstr("rdma_accept");
		return wait_event(RDMA_CM_EVENT_ESTABLISHED,
				  (int)std::max(deadline - now_ms(), 1L));
	}
}

Err Peer::poll_cq(int timeout_ms, bool want_recv, uint64_t want_wr, ibv_wc &out)
{
	long deadline = now_ms() + timeout_ms;
	bool armed = false;
	for (;;) {
		if (want_recv && !inbox_.empty())
			return "";
		if (!want_recv) {
			auto f = std::find_if(failed_wr_.begin(), failed_wr_.end(),
					      [&](auto &p) { return p.first == want_wr; });
			if (f != failed_wr_.end()) {
				out.status = (ibv_wc_status)f->second;
				failed_wr_.erase(f);
				return "";
			}
			auto d = std::find(done_wr_.begin(), done_wr_.end(), want_wr);
			if (d != done_wr_.end()) {
				out.status = IBV_WC_SUCCESS;
				done_wr_.erase(d);
				return "";
			}
		}
		ibv_wc wc[16];
		int n = ibv_poll_cq(cq_, 16, wc);
		if (n < 0)
			return "ibv_poll_cq failed";
		for (int i = 0; i < n; i++) {
			if (wc[i].wr_id & recv_tag) {
				if (wc[i].status != IBV_WC_SUCCESS)
					continue; // flushed: the QP is in error
				int slot_i = (int)(wc[i].wr_id & 0xffff);
				Received r;
				r.bytes.assign(mem_ + slot_i * slot,
					       mem_ + slot_i * slot + wc[i].byte_len);
				inbox_.push_back(std::move(r));
				(void)post_recv(slot_i);
			} else if (wc[i].status != IBV_WC_SUCCESS) {
				send_errors_++;
				failed_wr_.emplace_back(wc[i].wr_id, (int)wc[i].status);
			} else {
				done_wr_.push_back(wc[i].wr_id);
			}
		}
		if (n)
			continue;
		long left = deadline - now_ms();
		if (left <= 0)
			return "timeout";
		if (!armed) {
			// Arm, then poll once more: a completion between the
			// last poll and the arming raises no event.
			if (ibv_req_notify_cq(cq_, 0))
				return "ibv_req_notify_cq failed";
			armed = true;
			continue;
		}
		pollfd p{ cc_->fd, POLLIN, 0 };
		poll(&p, 1, (int)std::min(left, 1000L));
		ibv_cq *ev_cq;
		void *ev_ctx;
		if (ibv_get_cq_event(cc_, &ev_cq, &ev_ctx) == 0) {
			cq_events_++;
			armed = false;
		}
	}
}

Err Peer::post_send(const std::vector<uint8_t> &b)
{
	if (b.size() > slot)
		return "send too large for a slot";
	uint8_t *buf = mem_ + (nrecv + send_next_) * slot;
	send_next_ = (send_next_ + 1) % nsend;
	if (!b.empty())
		memcpy(buf, b.data(), b.size());
	ibv_sge sge{ (uintptr_t)buf, (uint32_t)b.size(), mr_->lkey };
	ibv_send_wr wr{}, *bad;
	wr.wr_id = ++wr_seq_;
	wr.sg_list = &sge;
	wr.num_sge = b.empty() ? 0 : 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(id_->qp, &wr, &bad))
		return errstr("ibv_post_send");
	return "";
}

Err Peer::send(const std::vector<uint8_t> &b, int timeout_ms)
{
	Err e = post_send(b);
	if (!e.empty())
		return e;
	ibv_wc wc{};
	if (!(e = poll_cq(timeout_ms, false, wr_seq_, wc)).empty())
		return "send completion: " + e;
	if (wc.status != IBV_WC_SUCCESS)
		return std::string("send completed with ") + ibv_wc_status_str(wc.status);
	return "";
}

bool Peer::recv(Received &r, int timeout_ms, Err *why)
{
	ibv_wc wc{};
	Err e = poll_cq(timeout_ms, true, 0, wc);
	if (!e.empty() || inbox_.empty()) {
		if (why)
			*why = e.empty() ? "nothing received" : e;
		return false;
	}
	r = std::move(inbox_.front());
	inbox_.pop_front();
	return true;
}

Err Peer::rdma(bool write, uint64_t addr, uint32_t rkey, uint32_t len, int timeout_ms)
{
	if (len > rdma_area)
		return "rdma too large";
	ibv_sge sge{ (uintptr_t)rdma_buf(), len, mr_->lkey };
	ibv_send_wr wr{}, *bad;
	wr.wr_id = ++wr_seq_;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(id_->qp, &wr, &bad))
		return errstr("ibv_post_send (rdma)");
	ibv_wc wc{};
	Err e = poll_cq(timeout_ms, false, wr_seq_, wc);
	if (!e.empty())
		return "rdma completion: " + e;
	if (wc.status != IBV_WC_SUCCESS)
		return ibv_wc_status_str(wc.status);
	return "";
}

Err Peer::expose(size_t len, uint8_t fill, uint64_t *addr, uint32_t *rkey)
{
	if (!pd_ || exposed_)
		return "expose: no connection, or a buffer is exposed already";
	void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return errstr("mmap");
	exposed_ = static_cast<uint8_t *>(m);
	exposed_len_ = len;
	memset(exposed_, fill, len);
	exposed_mr_ = ibv_reg_mr(pd_, exposed_, len,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_WRITE);
	if (!exposed_mr_)
		return errstr("ibv_reg_mr (exposed)");
	*addr = (uintptr_t)exposed_;
	*rkey = exposed_mr_->rkey;
	return "";
}

void Peer::unexpose()
{
	if (exposed_mr_)
		ibv_dereg_mr(exposed_mr_);
	exposed_mr_ = nullptr;
}

void Peer::disconnect()
{
	if (id_)
		rdma_disconnect(id_);
}

uint16_t Peer::src_port() const
{
	return id_ ? ntohs(rdma_get_src_port(id_)) : 0;
}

// --- Flood ---------------------------------------------------------------------

Flood::~Flood()
{
	for (rdma_cm_id *id : ids_) {
		if (id->qp)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	if (cq_)
		ibv_destroy_cq(cq_);
	if (pd_)
		ibv_dealloc_pd(pd_);
	if (ch_)
		rdma_destroy_event_channel(ch_);
}

void Flood::reap()
{
	for (rdma_cm_id *id : dead_) {
		ids_.erase(std::find(ids_.begin(), ids_.end(), id));
		if (id->qp)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	dead_.clear();
}

void Flood::handle(rdma_cm_event *ev)
{
	rdma_cm_id *id = ev->id;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, 5000)) {
			failed++;
			why["rdma_resolve_route " + std::to_string(errno)]++;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		if (!pd_) {
			ctx_ = id->verbs;
			pd_ = ibv_alloc_pd(ctx_);
			cq_ = pd_ ? ibv_create_cq(ctx_, 1024, nullptr, nullptr, 0) : nullptr;
		}
		ibv_qp_init_attr a{};
		a.send_cq = a.recv_cq = cq_;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = 1;
		a.cap.max_recv_wr = 1;
		a.cap.max_send_sge = a.cap.max_recv_sge = 1;
		rdma_conn_param p;
		conn_param(p);
		if (!cq_ || id->verbs != ctx_) {
			failed++;
			why["no CQ"]++;
		} else if (rdma_create_qp(id, pd_, &a)) {
			failed++;
			why["rdma_create_qp " + std::to_string(errno)]++;
		} else if (rdma_connect(id, &p)) {
			failed++;
			why["rdma_connect " + std::to_string(errno)]++;
		}
		break;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		established++;
		break;
	case RDMA_CM_EVENT_REJECTED:
		rejected++;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		disconnected++;
		// Of no more use: a flood of n must not need n of the
		// peer's connections at once (siw's rdma_create_qp failed
		// with EAGAIN after 67 alive, and after 125 with only
		// their QPs destroyed). Destroyed once the event is acked.
		dead_.push_back(id);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		failed++;
		why[std::string(rdma_event_str(ev->event)) + " " + std::to_string(ev->status)]++;
		break;
	default:
		break;
	}
}

Err Flood::start(const sockaddr *dst, int n, int window, int timeout_ms)
{
	if (!ch_) {
		ch_ = rdma_create_event_channel();
		if (!ch_)
			return errstr("rdma_create_event_channel");
		fcntl(ch_->fd, F_SETFL, fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
	}
	long deadline = now_ms() + timeout_ms;
	int started = started_;
	// At most window connections in setup at once: the listener sets each
	// one up in rdma_cm's handler, one at a time, and a burst of n would
	// have the later ones time out in the CM (an overload, not what is
	// tested). Each stays half-open until the listener drops it.
	while (established + rejected + failed < n) {
		while (started < n && started - (established + rejected + failed) < window) {
			rdma_cm_id *id;
			if (rdma_create_id(ch_, &id, nullptr, RDMA_PS_TCP))
				return errstr("rdma_create_id");
			ids_.push_back(id);
			if (rdma_resolve_addr(id, nullptr, const_cast<sockaddr *>(dst), 5000))
				return errstr("rdma_resolve_addr");
			started = ++started_;
		}
		long left = deadline - now_ms();
		if (left <= 0)
			return "after " + std::to_string(timeout_ms) +
			       " ms: " + std::to_string(established) + " established, " +
			       std::to_string(rejected) + " rejected, " + std::to_string(failed) +
			       " failed of " + std::to_string(n);
		pollfd p{ ch_->fd, POLLIN, 0 };
		poll(&p, 1, (int)std::min(left, 1000L));
		rdma_cm_event *ev;
		while (rdma_get_cm_event(ch_, &ev) == 0) {
			handle(ev);
			rdma_ack_cm_event(ev);
		}
		reap();
	}
	return "";
}

Err Flood::wait_all_disconnected(int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	while (disconnected < established) {
		long left = deadline - now_ms();
		if (left <= 0)
			return std::to_string(established - disconnected) + " of " +
			       std::to_string(established) + " still connected after " +
			       std::to_string(timeout_ms) + " ms";
		pollfd p{ ch_->fd, POLLIN, 0 };
		poll(&p, 1, (int)std::min(left, 100L));
		rdma_cm_event *ev;
		while (rdma_get_cm_event(ch_, &ev) == 0) {
			handle(ev);
			rdma_ack_cm_event(ev);
		}
		reap();
	}
	return "";
}

} // namespace hp
