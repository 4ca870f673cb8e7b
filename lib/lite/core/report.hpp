#pragma once
// One result record, several printers. A subcommand turns its result struct into a Report: the
// complete machine-readable JSON plus human views (tables, findings, notes). The printers below render
// the same Report as a text table, JSON, CSV or Markdown; they are listed in one table that drives
// parsing of --format and the help text.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/environment.hpp"

namespace lite::report {

constexpr int kSchemaVersion = 1;

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Columns left-aligned in text output; the others are right-aligned (numbers).
  size_t left_aligned_columns = 1;
};

// A diagnosis: what was seen, the threshold it crossed, what to try. Printed as one line.
struct Finding {
  std::string severity = "warning";  // "warning" or "info"
  std::string what;
  std::string threshold;
  std::string advice;
};

struct Report {
  std::string command;  // e.g. "profile"
  Environment environment;
  nlohmann::json result = nlohmann::json::object();  // everything, including raw samples
  std::vector<Table> tables;
  std::vector<Finding> findings;
  std::vector<std::string> notes;
};

enum class Format { text, json, csv, markdown };

struct PrinterEntry {
  const char* name;
  Format format;
  const char* description;
  void (*print)(const Report&, std::ostream&);
};

// The printer table: the one place a new output format is added.
const std::vector<PrinterEntry>& printers();
// Throws UsageError naming the known formats (and the closest one) for an unknown name.
Format parse_format(const std::string& name);
void print(const Report& report, Format format, std::ostream& out);

// The JSON document a report prints as: schema_version, tool, command, environment, result,
// findings. Also what artifacts embed as their measured figures.
nlohmann::json to_json(const Report& report);

// Renders a single table as aligned text (used by the text printer, exposed for tests).
std::string render_text_table(const Table& table);

}  // namespace lite::report
