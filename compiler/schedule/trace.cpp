// Trace text form (print and parse) and replay onto a Schedule.
#include "tunefarm/compiler/schedule/trace.h"

#include <cctype>
#include <sstream>

#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm {

namespace {

void PrintArg(std::ostream& os, const TraceArg& a) {
  if (!a.key.empty()) os << a.key << "=";
  switch (a.kind) {
    case TraceArg::Kind::kRef: os << a.ref; break;
    case TraceArg::Kind::kInt: os << a.value; break;
    case TraceArg::Kind::kString: {
      os << '"';
      for (char c : a.ref) {
        if (c == '"' || c == '\\') os << '\\';
        os << c;
      }
      os << '"';
      break;
    }
    case TraceArg::Kind::kList: {
      os << "[";
      for (size_t i = 0; i < a.list.size(); ++i) {
        if (i) os << ", ";
        PrintArg(os, a.list[i]);
      }
      os << "]";
      break;
    }
  }
}

// Recursive-descent parser for one instruction line.
class LineParser {
 public:
  LineParser(std::string_view text, int line) : s_(text), line_(line) {}

  Result<Instruction> Parse() {
    Instruction inst;
    // Optional "out, out = " prefix: look for '=' before the first '('.
    size_t paren = s_.find('(');
    size_t eq = s_.find('=');
    if (eq != std::string_view::npos && (paren == std::string_view::npos || eq < paren)) {
      std::string_view outs = s_.substr(0, eq);
      size_t start = 0;
      while (start <= outs.size()) {
        size_t comma = outs.find(',', start);
        std::string name = Trim(outs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (!IsRef(name)) return Error("'" + name + "' is not a handle name (expected l<N>, b<N> or v<N>)");
        inst.outputs.push_back(name);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      pos_ = eq + 1;
    }
    SkipSpace();
    std::string name;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) name += s_[pos_++];
    if (name.empty()) return Error("expected an instruction name");
    inst.name = name;
    inst.kind = ParseInstructionKind(name);  // empty off the list: ApplyTo names the line
    SkipSpace();
    if (!Eat('(')) return Error("expected '(' after " + name);
    SkipSpace();
    if (!Eat(')')) {
      while (true) {
        TraceArg arg;
        TF_RETURN_IF_ERROR(ParseArg(&arg, 0));
        inst.args.push_back(std::move(arg));
        SkipSpace();
        if (Eat(')')) break;
        if (!Eat(',')) return Error("expected ',' or ')' in the arguments of " + name);
      }
    }
    SkipSpace();
    if (pos_ < s_.size()) {
      if (s_.substr(pos_, 9) != "decision=") return Error("unexpected text after the arguments");
      pos_ += 9;
      TraceArg d;
      TF_RETURN_IF_ERROR(ParseArg(&d, 0));
      inst.has_decision = true;
      if (d.kind == TraceArg::Kind::kInt) {
        inst.decision = {d.value};
      } else if (d.kind == TraceArg::Kind::kList) {
        for (const TraceArg& x : d.list) {
          if (x.kind != TraceArg::Kind::kInt) return Error("a decision holds integers only");
          inst.decision.push_back(x.value);
        }
      } else {
        return Error("a decision is an integer or a list of integers");
      }
      SkipSpace();
      if (pos_ < s_.size()) return Error("unexpected text after the decision");
    }
    return inst;
  }

 private:
  static std::string Trim(std::string_view v) {
    size_t a = 0, b = v.size();
    while (a < b && std::isspace(static_cast<unsigned char>(v[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(v[b - 1]))) --b;
    return std::string(v.substr(a, b - a));
  }
  static bool IsRef(const std::string& s) {
    if (s.size() < 2 || (s[0] != 'l' && s[0] != 'b' && s[0] != 'v')) return false;
    for (size_t i = 1; i < s.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return s.size() < 12;
  }
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("trace line " + std::to_string(line_) + ", column " + std::to_string(pos_ + 1) + ": " + what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status ParseArg(TraceArg* out, int depth) {
    if (depth > 8) return Error("lists nest too deeply");
    SkipSpace();
    // keyword?
    size_t save = pos_;
    std::string word;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) word += s_[pos_++];
    if (!word.empty() && pos_ < s_.size() && s_[pos_] == '=') {
      ++pos_;
      TF_RETURN_IF_ERROR(ParseArg(out, depth + 1));
      out->key = word;
      return Status::OK();
    }
    pos_ = save;
    if (pos_ >= s_.size()) return Error("expected an argument");
    char c = s_[pos_];
    if (c == '[') {
      ++pos_;
      out->kind = TraceArg::Kind::kList;
      SkipSpace();
      if (Eat(']')) return Status::OK();
      while (true) {
        TraceArg item;
        TF_RETURN_IF_ERROR(ParseArg(&item, depth + 1));
        out->list.push_back(std::move(item));
        SkipSpace();
        if (Eat(']')) return Status::OK();
        if (!Eat(',')) return Error("expected ',' or ']' in a list");
      }
    }
    if (c == '"') {
      ++pos_;
      out->kind = TraceArg::Kind::kString;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
        out->ref += s_[pos_++];
      }
      if (!Eat('"')) return Error("unterminated string");
      return Status::OK();
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      std::string digits;
      if (c == '-') digits += s_[pos_++];
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) digits += s_[pos_++];
      if (digits == "-" || digits.size() > 19) return Error("bad integer '" + digits + "'");
      out->kind = TraceArg::Kind::kInt;
      out->value = std::stoll(digits);
      return Status::OK();
    }
    std::string ref;
    while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ref += s_[pos_++];
    if (!IsRef(ref)) return Error("expected a handle (l<N>, b<N>, v<N>), an integer, a string or a list");
    out->kind = TraceArg::Kind::kRef;
    out->ref = ref;
    return Status::OK();
  }

  std::string_view s_;
  int line_;
  size_t pos_ = 0;
};

}  // namespace

std::string Trace::ToText() const {
  std::ostringstream os;
  os << "tunefarm-trace " << kVersion << "\n";
  for (const Instruction& inst : instructions_) {
    for (size_t i = 0; i < inst.outputs.size(); ++i) os << (i ? ", " : "") << inst.outputs[i];
    if (!inst.outputs.empty()) os << " = ";
    os << inst.name << "(";
    for (size_t i = 0; i < inst.args.size(); ++i) {
      if (i) os << ", ";
      PrintArg(os, inst.args[i]);
    }
    os << ")";
    if (inst.has_decision) {
      os << " decision=";
      // One integer prints bare where the instruction's decision is a scalar.
      if (inst.kind && DecisionOf(*inst.kind) == InstructionDecision::kScalar && inst.decision.size() == 1) {
        os << inst.decision[0];
      } else {
        os << "[";
        for (size_t i = 0; i < inst.decision.size(); ++i) os << (i ? ", " : "") << inst.decision[i];
        os << "]";
      }
    }
    os << "\n";
  }
  return os.str();
}

bool TraceTextHasContent(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    size_t first = text.find_first_not_of(" \t\r", pos);
    if (first != std::string_view::npos && first < end && text[first] != '#') return true;
    pos = end + 1;
  }
  return false;
}

Result<Trace> Trace::Parse(std::string_view text) {
  Trace trace;
  int line_no = 0;
  bool saw_header = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (!saw_header) {
      if (line.substr(0, 15) != "tunefarm-trace ") {
        return Status::InvalidArgument("trace line " + std::to_string(line_no) + ": expected the header 'tunefarm-trace " +
                                       std::to_string(kVersion) + "'");
      }
      std::string version(line.substr(15));
      if (version != std::to_string(kVersion)) {
        return Status::InvalidArgument("trace line " + std::to_string(line_no) + ": trace version " + version +
                                       " is not supported (this tunefarm reads version " + std::to_string(kVersion) + ")");
      }
      saw_header = true;
      continue;
    }
    LineParser parser(line, line_no);
    TF_ASSIGN_OR_RETURN(Instruction inst, parser.Parse());
    inst.source_line = line_no;
    trace.Append(std::move(inst));
  }
  if (!saw_header) return Status::InvalidArgument("empty trace: expected the header 'tunefarm-trace 1'");
  return trace;
}

std::vector<size_t> Trace::DecisionIndices() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    if (instructions_[i].has_decision) out.push_back(i);
  }
  return out;
}

}  // namespace tunefarm
