// SPDX-License-Identifier: GPL-2.0
// Two engines wired back to back through a simulated reliable connection
// that, like RDMA, fails if a PDU arrives with no receive posted. Random
// message streams both ways, random repost/consume/completion timing and
// random credit settings; every byte must arrive, in order, and the pair
// must never stall. The seed is printed; SD_LOOPBACK_SEED replays one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "engine.h"

using namespace sdtest;

namespace
{

struct Side {
	Engine e;
	std::vector<Bytes> to_send;
	size_t next_msg = 0; // index of the message being sent
	bool sending = false;
	unsigned inflight = 0;	 // produced, not completed
	unsigned posted_nic = 0; // receives the simulated NIC holds

	explicit Side(const sd_core_config &c) : e(c)
	{
	}
};

struct Sim {
	std::mt19937_64 rng;
	Side a, b;		  // a: client, b: server
	std::deque<Bytes> ab, ba; // in flight, in order
	unsigned long long now = 0;
	std::string failure;

	Sim(uint64_t seed, const sd_core_config &ca, const sd_core_config &cb)
	    : rng(seed), a(ca), b(cb)
	{
	}

	unsigned pick(unsigned n)
	{
		return static_cast<unsigned>(rng() % n);
	}

	void post(Side &s, unsigned n)
	{
		if (!n)
			return;
		s.posted_nic += n;
		if (s.e.post(n) != SD_CORE_OK)
			failure = "post rejected";
	}

	// Produce everything the engine will give us now.
	void pump(Side &s, std::deque<Bytes> &wire)
	{
		for (;;) {
			if (!s.sending && s.next_msg < s.to_send.size() &&
			    s.e.stats().state == 2 /* established */) {
				int rc = s.e.send(
					static_cast<unsigned>(s.to_send[s.next_msg].size()));
				if (rc != SD_CORE_OK) {
					failure = "send_message " + std::to_string(rc);
					return;
				}
				s.sending = true;
			}
			const Bytes &msg = s.sending ? s.to_send[s.next_msg] : Bytes();
			sd_core_pdu info;
			int rc = s.e.produce(msg, &info);
			if (rc == SD_CORE_E_AGAIN)
				return;
			if (rc != SD_CORE_OK) {
				failure = "next_pdu " + std::to_string(rc);
				return;
			}
			if (getenv("SD_TRACE"))
				printf("%s t=%llu kind %u len %u grant %u flags %u credits now %u "
				       "peer %u posted %u\n",
				       &wire == &ab ? "A->B" : "B->A", now, info.kind, info.length,
				       info.credits_granted, info.flags, s.e.stats().send_credits,
				       s.e.stats().peer_credits, s.e.stats().receives_posted);
			wire.push_back(s.e.out.back());
			s.e.out.clear();
			s.inflight++;
			if (info.kind == SD_CORE_PDU_DATA && info.message_last) {
				s.sending = false;
				s.next_msg++;
			}
		}
	}

	void deliver(Side &to, std::deque<Bytes> &wire, Side &from, std::deque<Bytes> &back)
	{
		if (to.posted_nic == 0) {
			failure = "receiver not ready: PDU arrived with no receive posted";
			return;
		}
		to.posted_nic--;
		Bytes pdu = wire.front();
		wire.pop_front();
		int rc = to.e.recv(pdu);
		if (rc != SD_CORE_OK) {
			failure = "on_recv " + std::to_string(rc) + " error " +
				  std::to_string(to.e.disconnect_error);
			return;
		}
		(void)from;
		if (to.e.last.flags & SD_CORE_ACT_SEND)
			pump(to, back);
	}
};

std::string stalled(Sim &sim, const char *what)
{
	char buf[320];
	// A PDU the engine could produce but never asked for is a lost SEND.
	const bool lost_a = sim.a.e.produce(sim.a.sending ? sim.a.to_send[sim.a.next_msg]
							  : Bytes()) == SD_CORE_OK;
	const bool lost_b = sim.b.e.produce(sim.b.sending ? sim.b.to_send[sim.b.next_msg]
							  : Bytes()) == SD_CORE_OK;
	snprintf(buf, sizeof(buf),
		 "%s: a sent %zu/%zu got %zu credits %u peer %u posted %u; b sent %zu/%zu got %zu "
		 "credits %u peer %u posted %u; lost SEND a %d b %d",
		 what, sim.a.next_msg, sim.a.to_send.size(), sim.a.e.messages.size(),
		 sim.a.e.stats().send_credits, sim.a.e.stats().peer_credits,
		 sim.a.e.stats().receives_posted, sim.b.next_msg, sim.b.to_send.size(),
		 sim.b.e.messages.size(), sim.b.e.stats().send_credits,
		 sim.b.e.stats().peer_credits, sim.b.e.stats().receives_posted, lost_a, lost_b);
	return buf;
}

// The random scheduler lives in one function to keep each choice visible.
std::string run_loopback(uint64_t seed, unsigned messages, bool print)
{
	std::mt19937_64 cfg_rng(seed);
	auto r = [&](unsigned lo, unsigned hi) {
		return lo + static_cast<unsigned>(cfg_rng() % (hi - lo + 1));
	};
	sd_core_config ca = config(SD_CORE_ROLE_CLIENT), cb = config(SD_CORE_ROLE_SERVER);
	for (sd_core_config *c : { &ca, &cb }) {
		c->receive_credit_max = r(2, 40);
		c->send_credit_target = r(2, 40);
		c->max_send_size = r(128, 2048);
		c->max_receive_size = r(128, 2048);
		c->max_fragmented_size = r(131072, 300000);
		c->keepalive_interval_ms = r(0, 1) ? r(50, 400) : 0;
		c->keepalive_timeout_ms = 1000000; // the simulation never loses a peer
	}
	if (print)
		printf("loopback seed %llu: credits %u/%u and %u/%u, send %u/%u, recv %u/%u\n",
		       static_cast<unsigned long long>(seed), ca.receive_credit_max,
		       ca.send_credit_target, cb.receive_credit_max, cb.send_credit_target,
		       ca.max_send_size, cb.max_send_size, ca.max_receive_size,
		       cb.max_receive_size);

	Sim sim(seed * 7919 + 1, ca, cb);
	for (Side *s : { &sim.a, &sim.b }) {
		const unsigned limit = std::min(ca.max_fragmented_size, cb.max_fragmented_size);
		for (unsigned i = 0; i < messages; i++) {
			unsigned kind = r(0, 19);
			unsigned len = kind < 7	   ? r(1, 3000)
				       : kind < 19 ? r(1, 40000)
						   : r(limit - 10, limit);
			s->to_send.push_back(pattern(len, r(0, 1000)));
		}
	}
	if (sim.a.e.init() || sim.b.e.init())
		return "init failed";
	// Receives go up before connecting, as the glue must do.
	sim.post(sim.a, ca.receive_credit_max);
	sim.post(sim.b, cb.receive_credit_max);
	if (sim.b.e.connected() || sim.a.e.connected())
		return "connect failed";
	sim.pump(sim.a, sim.ab);

	unsigned long steps = 0, stuck_steps = 0;
	size_t last_progress = ~size_t(0);
	for (;;) {
		if (!sim.failure.empty())
			break;
		if (sim.a.e.disconnected || sim.b.e.disconnected)
			return stalled(sim, ("unexpected disconnect: reasons " +
					     std::to_string(sim.a.e.disconnect_reason) + "/" +
					     std::to_string(sim.b.e.disconnect_reason))
						    .c_str());
		const bool done = sim.a.e.messages.size() == sim.b.to_send.size() &&
				  sim.b.e.messages.size() == sim.a.to_send.size();
		if (done)
			break;
		const size_t progress = sim.a.e.messages.size() + sim.b.e.messages.size() +
					sim.a.next_msg + sim.b.next_msg;
		if (progress != last_progress) {
			last_progress = progress;
			stuck_steps = 0;
		} else if (++stuck_steps > 200000) {
			return stalled(sim, "no progress (probes only)");
		}
		sim.now += sim.pick(3);
		sim.a.e.now = sim.b.e.now = sim.now;
		std::vector<int> opt;
		if (!sim.ab.empty())
			opt.push_back(0);
		if (!sim.ba.empty())
			opt.push_back(1);
		if (sim.a.e.reposts_owed || sim.a.e.held)
			opt.push_back(2);
		if (sim.b.e.reposts_owed || sim.b.e.held)
			opt.push_back(3);
		if (sim.a.inflight)
			opt.push_back(4);
		if (sim.b.inflight)
			opt.push_back(5);
		if (sim.a.e.timer && sim.a.e.timer <= sim.now)
			opt.push_back(6);
		if (sim.b.e.timer && sim.b.e.timer <= sim.now)
			opt.push_back(7);
		if (opt.empty()) {
			// Nothing moves: only a future timer can help.
			unsigned long long next = ~0ull;
			if (sim.a.e.timer > sim.now)
				next = std::min(next, sim.a.e.timer);
			if (sim.b.e.timer > sim.now)
				next = std::min(next, sim.b.e.timer);
			if (next == ~0ull)
				return stalled(sim, "deadlock");
			sim.now = next;
			continue;
		}
		steps++;
		Side *s = nullptr;
		switch (opt[sim.pick(static_cast<unsigned>(opt.size()))]) {
		case 0:
			sim.deliver(sim.b, sim.ab, sim.a, sim.ba);
			break;
		case 1:
			sim.deliver(sim.a, sim.ba, sim.b, sim.ab);
			break;
		case 2:
		case 3: {
			s = opt.size() && sim.pick(2) ? &sim.a : &sim.b;
			if (!(s->e.reposts_owed || s->e.held))
				s = s == &sim.a ? &sim.b : &sim.a;
			// The reader consumes some delivered buffers; free ones go back.
			unsigned n = s->e.reposts_owed;
			unsigned consumed = s->e.held ? sim.pick(s->e.held + 1) : 0;
			s->e.reposts_owed = 0;
			s->e.held -= consumed;
			sim.post(*s, n + consumed);
			if (s->e.last.flags & SD_CORE_ACT_SEND)
				sim.pump(*s, s == &sim.a ? sim.ab : sim.ba);
			break;
		}
		case 4:
		case 5: {
			s = sim.pick(2) ? &sim.a : &sim.b;
			if (!s->inflight)
				s = s == &sim.a ? &sim.b : &sim.a;
			unsigned n = 1 + sim.pick(s->inflight);
			s->inflight -= n;
			if (s->e.completed(n) != SD_CORE_OK)
				return "send completion rejected";
			break;
		}
		case 6:
		case 7: {
			s = sim.a.e.timer && sim.a.e.timer <= sim.now ? &sim.a : &sim.b;
			s->e.timer = 0;
			if (s->e.fire() != SD_CORE_OK)
				return "timer rejected";
			if (s->e.last.flags & SD_CORE_ACT_SEND)
				sim.pump(*s, s == &sim.a ? sim.ab : sim.ba);
			break;
		}
		}
	}
	if (!sim.failure.empty())
		return sim.failure;
	for (size_t i = 0; i < sim.a.to_send.size(); i++)
		if (sim.b.e.messages[i] != sim.a.to_send[i])
			return "client->server message " + std::to_string(i) + " differs";
	for (size_t i = 0; i < sim.b.to_send.size(); i++)
		if (sim.a.e.messages[i] != sim.b.to_send[i])
			return "server->client message " + std::to_string(i) + " differs";
	return "";
}

} // namespace

TEST(Loopback, RandomStreamsArriveInOrder)
{
	uint64_t base = 20261121;
	unsigned runs = 12;
	if (const char *env = getenv("SD_LOOPBACK_SEED")) {
		base = strtoull(env, nullptr, 0);
		runs = 1;
	}
	for (unsigned i = 0; i < runs; i++) {
		const uint64_t seed = base + i;
		std::string err = run_loopback(seed, 20, true);
		ASSERT_EQ(err, "")
			<< "seed " << seed << " (replay: SD_LOOPBACK_SEED=" << seed << ")";
	}
}
