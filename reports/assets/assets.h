// The files report.html carries inline: its stylesheets and its script. They live in
// reports/assets/ as ordinary .css and .js files, where editors and linters see them; the build
// embeds each one byte for byte (reports/assets/embed.cmake writes a source per file), so the
// page needs nothing beside the binary.
#ifndef LOCKSTEP_REPORTS_ASSETS_ASSETS_H_
#define LOCKSTEP_REPORTS_ASSETS_ASSETS_H_

#include <string_view>

namespace lockstep::reports::assets {

// report.css: every page's style (lanes, overview, charts, tables).
extern const std::string_view kReportCss;
// comparison.css: what only a replay's page with two runs adds (after report.css).
extern const std::string_view kComparisonCss;
// report.js: zoom, pan, the lane filter and #t= links; every page ends with it.
extern const std::string_view kReportJs;

}  // namespace lockstep::reports::assets

#endif  // LOCKSTEP_REPORTS_ASSETS_ASSETS_H_
