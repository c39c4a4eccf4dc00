// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parsing of epoll fdinfo (see epoll_fdinfo.hpp): pure functions only.
 */
#include "epoll_fdinfo.hpp"

#include "config.hpp"

namespace sd::preload {

namespace {

int digit(char c, unsigned base)
{
	int d = -1;
	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	return d >= 0 && static_cast<unsigned>(d) < base ? d : -1;
}

/*
 * The number after "key:" (blanks allowed between), in base; nullopt when
 * the key is missing, has no digits or overflows 64 bits.
 */
std::optional<uint64_t> field(std::string_view line, std::string_view key, unsigned base)
{
	std::size_t at = 0;
	for (;;) {
		at = line.find(key, at);
		if (at == std::string_view::npos)
			return std::nullopt;
		/* A whole key: at the start or after a blank ("ino:" not "xino:"). */
		if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t')
			break;
		at += key.size();
	}
	std::size_t i = at + key.size();
	while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
		i++;
	uint64_t v = 0;
	std::size_t digits = 0;
	for (; i < line.size(); i++, digits++) {
		int d = digit(line[i], base);
		if (d < 0)
			break;
		if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / base)
			return std::nullopt;
		v = v * base + static_cast<uint64_t>(d);
	}
	if (!digits)
		return std::nullopt;
	return v;
}

} // namespace

std::optional<FdinfoWatch> parse_fdinfo_watch(std::string_view line)
{
	if (head(line, 4) != "tfd:")
		return std::nullopt;
	std::optional<uint64_t> tfd = field(line, "tfd:", 10);
	std::optional<uint64_t> events = field(line, "events:", 16);
	std::optional<uint64_t> data = field(line, "data:", 16);
	if (!tfd || !events || !data || *tfd > INT32_MAX || *events > UINT32_MAX)
		return std::nullopt;
	FdinfoWatch w;
	w.tfd = static_cast<int>(*tfd);
	w.events = static_cast<uint32_t>(*events);
	w.data = *data;
	w.ino = field(line, "ino:", 16);
	return w;
}

bool watches_socket(const FdinfoWatch &w, int fd, uint64_t ino)
{
	/* Without ino (old kernels) the fd number is all there is. */
	return w.tfd == fd && (!w.ino || *w.ino == ino);
}

bool is_eventpoll_link(std::string_view target)
{
	return target == "anon_inode:[eventpoll]";
}

FdinfoScan scan_epoll_fdinfo(std::string_view text, bool at_end, int fd, uint64_t ino,
			     FdinfoWatch *out, std::size_t max)
{
	FdinfoScan r;
	while (r.consumed < text.size()) {
		std::string_view rest = tail(text, r.consumed);
		std::size_t nl = rest.find('\n');
		if (nl == std::string_view::npos && !at_end)
			break;
		std::string_view line = head(rest, nl);
		r.consumed += nl == std::string_view::npos ? rest.size() : nl + 1;
		std::optional<FdinfoWatch> w = parse_fdinfo_watch(line);
		if (!w || !watches_socket(*w, fd, ino))
			continue;
		if (r.found < max)
			out[r.found] = *w;
		r.found++;
	}
	return r;
}

} // namespace sd::preload
