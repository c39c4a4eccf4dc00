// SPDX-License-Identifier: LGPL-2.1-or-later
#include "proc_users.hpp"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <unistd.h>

#include "units.hpp"

namespace sd::tool
{

namespace
{

struct DirClose {
	void operator()(DIR *d) const
	{
		closedir(d);
	}
};
using Dir = std::unique_ptr<DIR, DirClose>;

std::string read_comm(const std::string &pid_dir)
{
	std::ifstream f(pid_dir + "/comm");
	std::string comm;
	std::getline(f, comm);
	return comm;
}

} // namespace

uint64_t socket_inode(const std::string &link)
{
	constexpr std::string_view prefix = "socket:[";
	if (!link.starts_with(prefix) || !link.ends_with(']'))
		return 0;
	std::string_view digits(link);
	digits = digits.substr(prefix.size(), digits.size() - prefix.size() - 1);
	return parse_uint(digits, 1, UINT64_MAX).value_or(0);
}

ProcUsers scan_proc_users(const std::string &proc_root, const std::set<uint64_t> &wanted)
{
	ProcUsers users;
	Dir proc(opendir(proc_root.c_str()));
	if (!proc)
		return users;
	while (dirent *p = readdir(proc.get())) {
		auto pid = parse_uint(p->d_name, 1, INT32_MAX);
		if (!pid)
			continue;
		std::string pid_dir = proc_root + "/" + p->d_name;
		std::string fd_dir = pid_dir + "/fd";
		Dir fds(opendir(fd_dir.c_str()));
		if (!fds)
			continue;
		std::string comm; /* read once a socket of interest turns up */
		while (dirent *f = readdir(fds.get())) {
			auto fd = parse_uint(f->d_name, 0, INT32_MAX);
			if (!fd)
				continue;
			char link[64];
			std::string path = fd_dir + "/" + f->d_name;
			ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			uint64_t inode = socket_inode(std::string(link, static_cast<size_t>(n)));
			if (!inode || (!wanted.empty() && !wanted.count(inode)))
				continue;
			if (comm.empty())
				comm = read_comm(pid_dir);
			users[inode].push_back(
				{ comm, static_cast<int>(*pid), static_cast<int>(*fd) });
		}
	}
	for (auto &[inode, list] : users)
		std::sort(list.begin(), list.end(), [](const auto &a, const auto &b) {
			return a.pid != b.pid ? a.pid < b.pid : a.fd < b.fd;
		});
	return users;
}

std::string format_users(const std::vector<nl::ProcessRef> &users)
{
	if (users.empty())
		return "";
	std::string out = "users:(";
	for (size_t i = 0; i < users.size(); i++) {
		const auto &u = users[i];
		out += (i ? ",(\"" : "(\"") + u.comm + "\",pid=" + std::to_string(u.pid) +
		       ",fd=" + std::to_string(u.fd) + ")";
	}
	return out + ")";
}

} // namespace sd::tool
