// The text `linnet explain` prints for an Explanation.
#include <algorithm>
#include <sstream>

#include "linnet/ops/explain.hpp"

namespace linnet::ops {

namespace {

std::string reached_text(const std::optional<int64_t>& reached) {
  std::string text = "x";
  text += reached ? std::to_string(*reached) : std::string("?");
  return text;
}

}  // namespace

std::string render_explanation(const Explanation& explanation) {
  std::ostringstream out;
  out << "explain " << explanation.entry << explanation.bindings << "\n";
  out << "numerics " << eval::numerics_policy_name(explanation.policy) << ", op table " << explanation.table << "\n";
  if (explanation.sites.empty()) {
    out << "no op call sites are reachable from this entry\n";
  }

  size_t location_width = 0, op_width = 0;
  for (const ExplainedSite& site : explanation.sites) {
    location_width = std::max(location_width, site.location.size());
    op_width = std::max(op_width, site.op.size());
  }
  int64_t native_calls = 0, body_calls = 0;
  size_t native_sites = 0, body_sites = 0, unknown_sites = 0;
  bool counts_known = true;
  for (const ExplainedSite& site : explanation.sites) {
    const std::string dtype = site.dtype ? std::string(tensor::dtype_name(*site.dtype)) : "?";
    out << site.location << std::string(location_width - site.location.size() + 2, ' ') << site.op
        << std::string(op_width - site.op.size() + 2, ' ') << dtype << std::string(dtype.size() < 5 ? 5 - dtype.size() : 1, ' ')
        << site_decision_name(site.decision) << "  " << reached_text(site.reached) << "  " << site.reason << "  [in "
        << site.within << "]\n";
    switch (site.decision) {
      case SiteDecision::Native: ++native_sites; break;
      case SiteDecision::Body: ++body_sites; break;
      case SiteDecision::Unknown: ++unknown_sites; break;
    }
    if (!site.reached) {
      counts_known = false;
    } else if (site.decision == SiteDecision::Native) {
      native_calls += *site.reached;
    } else if (site.decision == SiteDecision::Body) {
      body_calls += *site.reached;
    }
  }
  out << explanation.sites.size() << (explanation.sites.size() == 1 ? " op call site: " : " op call sites: ") << native_sites << " native, " << body_sites << " body";
  if (unknown_sites > 0) out << ", " << unknown_sites << " of unknown dtype";
  if (counts_known) out << "; per entry call " << native_calls << " native and " << body_calls << " body op calls";
  out << "\n";
  for (const std::string& note : explanation.notes) out << "note: " << note << "\n";
  return out.str();
}

}  // namespace linnet::ops
