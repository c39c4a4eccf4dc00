// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Columns for people, as ss(8) and rdma(8) print them: a header line, each
 * column as wide as its widest cell plus two spaces, the last one unpadded.
 */
#ifndef SMBDIRECT_TOOLS_TABLE_HPP
#define SMBDIRECT_TOOLS_TABLE_HPP

#include <string>
#include <vector>

namespace sd::tool
{

class Table {
    public:
	explicit Table(std::vector<std::string> header);
	/* A row; missing cells are empty, extra ones are dropped. */
	void add(std::vector<std::string> row);
	std::string render() const;

    private:
	std::vector<std::vector<std::string>> rows_;
	size_t columns_;
};

} // namespace sd::tool

#endif
