#include "lite/core/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::report {

namespace {

std::string finding_line(const Finding& f) {
  std::string line = f.severity + ": " + f.what;
  if (!f.threshold.empty()) line += " (threshold: " + f.threshold + ")";
  if (!f.advice.empty()) line += "; try: " + f.advice;
  return line;
}

void print_text(const Report& r, std::ostream& out) {
  bool first = true;
  for (const auto& t : r.tables) {
    if (!first) out << '\n';
    first = false;
    out << render_text_table(t);
  }
  if (!r.findings.empty()) {
    out << '\n';
    for (const auto& f : r.findings) out << finding_line(f) << '\n';
  }
  if (!r.notes.empty()) {
    out << '\n';
    for (const auto& n : r.notes) out << n << '\n';
  }
  // Where the figures were measured (the JSON printer carries the whole environment).
  if (!r.environment.cpu_model.empty()) out << '\n' << describe_machine(r.environment) << '\n';
}

void print_json(const Report& r, std::ostream& out) { out << to_json(r).dump(2) << '\n'; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

void print_csv(const Report& r, std::ostream& out) {
  bool many = r.tables.size() > 1;
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const auto& t = r.tables[i];
    if (i) out << '\n';
    if (many) out << "# " << t.title << '\n';
    for (size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << csv_field(t.columns[c]);
    out << '\n';
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
      out << '\n';
    }
  }
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += '\\';
    o += c;
  }
  return o;
}

void print_markdown(const Report& r, std::ostream& out) {
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const auto& t = r.tables[i];
    if (i) out << '\n';
    if (!t.title.empty()) out << "### " << t.title << "\n\n";
    out << '|';
    for (const auto& c : t.columns) out << ' ' << md_cell(c) << " |";
    out << "\n|";
    for (size_t c = 0; c < t.columns.size(); ++c) out << (c < t.left_aligned_columns ? " :--- |" : " ---: |");
    out << '\n';
    for (const auto& row : t.rows) {
      out << '|';
      for (const auto& cell : row) out << ' ' << md_cell(cell) << " |";
      out << '\n';
    }
  }
  if (!r.findings.empty()) {
    out << '\n';
    for (const auto& f : r.findings) out << "- " << finding_line(f) << '\n';
  }
  if (!r.notes.empty()) {
    out << '\n';
    for (const auto& n : r.notes) out << n << "  \n";
  }
  if (!r.environment.cpu_model.empty()) out << '\n' << describe_machine(r.environment) << '\n';
}

}  // namespace

const std::vector<PrinterEntry>& printers() {
  static const std::vector<PrinterEntry> table = {
      {"text", Format::text, "aligned tables for a terminal (default)", print_text},
      {"json", Format::json, "complete result with environment and raw samples", print_json},
      {"csv", Format::csv, "tables as comma-separated values", print_csv},
      {"markdown", Format::markdown, "tables as GitHub-flavoured Markdown", print_markdown},
  };
  return table;
}

Format parse_format(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& p : printers()) {
    if (name == p.name) return p.format;
    names.push_back(p.name);
  }
  throw UsageError(unknown_name_message("output format", name, names));  // the CLI names the flag
}

void print(const Report& report, Format format, std::ostream& out) {
  for (const auto& p : printers())
    if (p.format == format) return p.print(report, out);
  throw InternalError("no printer registered for the requested format");
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"severity", f.severity}, {"what", f.what}, {"threshold", f.threshold}, {"advice", f.advice}});
  return nlohmann::json{{"schema_version", kSchemaVersion},
                        {"tool", "lite"},
                        {"command", r.command},
                        {"environment", r.environment},
                        {"result", r.result},
                        {"findings", findings}};
}

std::string render_text_table(const Table& t) {
  size_t ncol = t.columns.size();
  for (const auto& row : t.rows) ncol = std::max(ncol, row.size());
  std::vector<size_t> width(ncol, 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  };
  measure(t.columns);
  for (const auto& row : t.rows) measure(row);

  std::string out;
  if (!t.title.empty()) out += t.title + '\n';
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < ncol; ++c) {
      const std::string cell = c < row.size() ? row[c] : std::string();
      size_t pad = width[c] - display_width(cell);
      if (c) line += "  ";
      if (c < t.left_aligned_columns)
        line += cell + std::string(c + 1 == ncol ? 0 : pad, ' ');
      else
        line += std::string(pad, ' ') + cell;
    }
    out += line + '\n';
  };
  if (!t.columns.empty()) {
    emit(t.columns);
    size_t total = 0;
    for (size_t c = 0; c < ncol; ++c) total += width[c] + (c ? 2 : 0);
    out += std::string(total, '-') + '\n';
  }
  for (const auto& row : t.rows) emit(row);
  return out;
}

}  // namespace lite::report
