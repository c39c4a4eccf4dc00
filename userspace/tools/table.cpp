// SPDX-License-Identifier: LGPL-2.1-or-later
#include "table.hpp"

#include <algorithm>

namespace sd::tool
{

Table::Table(std::vector<std::string> header) : columns_(header.size())
{
	rows_.push_back(std::move(header));
}

void Table::add(std::vector<std::string> row)
{
	row.resize(columns_);
	/* One line per row, whatever a cell holds. */
	for (auto &cell : row)
		for (auto &c : cell)
			if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
				c = ' ';
	rows_.push_back(std::move(row));
}

std::string Table::render() const
{
	std::vector<size_t> width(columns_, 0);
	std::string out;

	for (const auto &r : rows_)
		for (size_t c = 0; c < columns_; c++)
			width[c] = std::max(width[c], r[c].size());
	for (const auto &r : rows_) {
		std::string line;
		for (size_t c = 0; c < columns_; c++) {
			line += r[c];
			if (c + 1 < columns_)
				line.append(width[c] + 2 - r[c].size(), ' ');
		}
		while (!line.empty() && line.back() == ' ')
			line.pop_back();
		out += line + '\n';
	}
	return out;
}

} // namespace sd::tool
