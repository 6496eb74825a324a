#pragma once
// The tool's output formats (-o, --output, --format).

namespace studentsvc_cli {

enum class Format { json, ndjson, csv, table };

}  // namespace studentsvc_cli
