// A heatmap as a standalone SVG file, written by hand (no plotting library): a grid of
// coloured cells with the value printed in each, axis labels, a title and a legend.
//
// Only the cells are <rect> elements (background and legend swatches are paths), so a
// reader or a test can count cells by counting rects.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace kprop {

// How a cell's value becomes a colour.
enum class ColourScale {
  sequential,    // light to dark over [min, max] of the finite values
  log_centred,   // log scale, `centre` neutral (white), below in `low` tones, above in `high`
  categorical,   // by category only: pass green, fail red, everything else grey
};

struct HeatmapCell {
  std::string text;      // printed in the cell
  double value = NAN;    // coloured by the scale when finite (or +-inf on a log scale)
  std::string category;  // coloured by category when `value` is NaN: "pass", "fail", ...
  std::string tooltip;   // shown on hover (e.g. a failure's signature); may be empty
};

struct Heatmap {
  std::string title;
  std::vector<std::string> subtitle;  // lines under the title, e.g. fixed parameters
  std::string x_label, y_label;
  std::vector<std::string> x_ticks;   // column headings, left to right
  std::vector<std::string> y_ticks;   // row headings, top to bottom
  std::vector<std::vector<HeatmapCell>> cells;  // [row][column]
  ColourScale scale = ColourScale::sequential;
  double centre = 1;                  // log_centred: the neutral value
  std::string low_colour = "#2166ac", high_colour = "#b2182b";  // log_centred ends
  std::string legend_title;           // e.g. "ratio (log scale)"
};

std::string render_svg(const Heatmap& heatmap);

// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(const std::string& text);

}  // namespace kprop
