// Purpose: `mgpu_analyze predict --published TABLE.json`: a published multi-node all-reduce table read from its file
// (bench/results/published-allreduce/ holds the project's) and the cluster all-reduce model held against it, as a
// table of published and predicted times with the error per size, and a summary of each table's error apart: in-sample
// (the table the constants were fitted to) or held out.
#pragma once

#include <string>
#include <vector>

#include "stats/published_allreduce.hpp"
#include "table.hpp"

namespace mgpu::analysis {

// The file's table; UsageError naming the file and the first missing or malformed member.
stats::PublishedTable read_published_table(const std::string& path);

// Per row: bytes, published and predicted us, error %, the candidate (algorithm, protocol); notes: the source, the
// inputs (node, NIC) and the worst |error| over 1 to 128 MiB and below 1 MiB.
Table published_table(const stats::PublishedTable& table, const stats::HeldTable& held);

// One row per table: in-sample or held out, its rows, the constants fitted to them (in-sample only), the error's range
// and worst |error| over every row.
Table published_error_table(const std::vector<stats::PublishedTable>& tables);

}  // namespace mgpu::analysis
