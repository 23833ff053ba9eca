#include "harness/presentation/svg_heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace kprop {

namespace {

// Sizes in pixels. Text width is estimated (no font metrics in a hand-written file):
// 12px sans-serif averages well under 7.2px per character.
constexpr double kCharWidth = 7.2, kTitleCharWidth = 9.5;
constexpr double kMargin = 16, kCellHeight = 30, kMinCellWidth = 56, kLegendWidth = 170;
constexpr double kBarWidth = 16, kSwatch = 14;

struct Rgb {
  double r, g, b;
};

Rgb parse_colour(const std::string& hex) {
  unsigned r = 0, g = 0, b = 0;
  if (hex.size() != 7 || std::sscanf(hex.c_str(), "#%02x%02x%02x", &r, &g, &b) != 3)
    return {0.5, 0.5, 0.5};
  return {r / 255.0, g / 255.0, b / 255.0};
}

std::string hex(const Rgb& c) {
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(c.r), byte(c.g), byte(c.b));
}

Rgb mix(const Rgb& a, const Rgb& b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

// Dark text on light cells, white text on dark ones.
std::string text_colour_on(const std::string& fill) {
  const Rgb c = parse_colour(fill);
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b < 0.5 ? "#ffffff" : "#1a1a1a";
}

const Rgb kNeutral = parse_colour("#f7f7f7");

std::string category_colour(const std::string& category) {
  if (category == "pass") return "#4dac26";
  if (category == "fail") return "#d7191c";
  if (category == "skipped") return "#e0e0e0";
  return "#b0b0b0";  // rejected, n/a, invalid: no number to show
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", v);
}

// The colour of each finite value, with what the legend needs to draw the same scale.
class Scale {
 public:
  explicit Scale(const Heatmap& h) : h_(h) {
    for (const auto& row : h.cells)
      for (const auto& cell : row)
        if (!std::isnan(cell.value)) {
          has_values_ = true;
          if (std::isfinite(cell.value)) {
            lo_ = std::min(lo_, cell.value);
            hi_ = std::max(hi_, cell.value);
          }
          if (h.scale == ColourScale::log_centred && cell.value > 0 && std::isfinite(cell.value))
            span_ = std::max(span_, std::abs(std::log(cell.value / h.centre)));
        }
  }
  bool continuous() const { return has_values_ && h_.scale != ColourScale::categorical; }

  // Position on the scale: 0..1 (sequential) or -1..1 (log_centred, 0 at the centre).
  double position(double v) const {
    if (h_.scale == ColourScale::log_centred) {
      if (v <= 0) return -1;
      if (std::isinf(v)) return 1;
      return std::clamp(std::log(v / h_.centre) / span_, -1.0, 1.0);
    }
    if (std::isinf(v)) return v > 0 ? 1 : 0;
    return hi_ > lo_ ? (v - lo_) / (hi_ - lo_) : 0.5;
  }

  std::string colour_at(double position) const {
    if (h_.scale == ColourScale::log_centred)
      return hex(position < 0 ? mix(kNeutral, parse_colour(h_.low_colour), -position)
                              : mix(kNeutral, parse_colour(h_.high_colour), position));
    const Rgb light = parse_colour("#f7fbff"), mid = parse_colour("#6baed6"),
              dark = parse_colour("#08306b");
    return hex(position < 0.5 ? mix(light, mid, 2 * position) : mix(mid, dark, 2 * position - 1));
  }

  std::string fill(const HeatmapCell& cell) const {
    if (std::isnan(cell.value) || h_.scale == ColourScale::categorical)
      return category_colour(cell.category);
    return colour_at(position(cell.value));
  }

  // The legend's end and middle values, top to bottom, with their bar positions.
  std::vector<std::pair<double, double>> ticks() const {
    if (h_.scale == ColourScale::log_centred)
      return {{h_.centre * std::exp(span_), 1}, {h_.centre, 0}, {h_.centre * std::exp(-span_), -1}};
    if (!(hi_ >= lo_)) return {};
    return {{hi_, 1}, {(lo_ + hi_) / 2, 0.5}, {lo_, 0}};
  }
  double bottom_position() const { return h_.scale == ColourScale::log_centred ? -1 : 0; }

 private:
  const Heatmap& h_;
  bool has_values_ = false;
  double lo_ = INFINITY, hi_ = -INFINITY;
  // At least a factor of 2 either side, so that values all near the centre stay pale.
  double span_ = std::log(2.0);
};

double text_width(const std::string& s, double per_char = kCharWidth) {
  return per_char * static_cast<double>(s.size());
}

std::string square(double x, double y, double size, const std::string& fill) {
  return fmt::format("<path d=\"M{:.1f} {:.1f}h{:.1f}v{:.1f}h{:.1f}z\" fill=\"{}\" stroke=\"#666\" "
                     "stroke-width=\"0.5\"/>\n",
                     x, y, size, size, -size, fill);
}

std::string text(double x, double y, const std::string& s, const std::string& attributes = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>\n", x, y,
                     attributes.empty() ? "" : " ", attributes, xml_escape(s));
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string render_svg(const Heatmap& h) {
  const Scale scale(h);
  const size_t rows = h.cells.size(), columns = rows ? h.cells[0].size() : 0;

  double cell_width = kMinCellWidth, y_tick_width = text_width(h.y_label);
  for (const auto& t : h.x_ticks) cell_width = std::max(cell_width, text_width(t) + 16);
  for (const auto& row : h.cells)
    for (const auto& cell : row) cell_width = std::max(cell_width, text_width(cell.text) + 16);
  for (const auto& t : h.y_ticks) y_tick_width = std::max(y_tick_width, text_width(t));

  // Title, subtitle, x label and x ticks above the grid (the grid reads like the Markdown
  // table: columns left to right, rows top to bottom); y label and ticks to its left.
  const double title_y = kMargin + 16;
  const double subtitle_y = title_y + 20;
  const double x_label_y = subtitle_y + 16.0 * h.subtitle.size() + 8;
  const double x_ticks_y = x_label_y + 20;
  const double grid_top = x_ticks_y + 10;
  const double grid_left = kMargin + 24 + y_tick_width + 10;
  const double grid_width = cell_width * columns, grid_height = kCellHeight * rows;
  const double legend_left = grid_left + grid_width + 28;

  // Which categories appear: the legend names each once.
  std::vector<std::string> categories;
  for (const auto& row : h.cells)
    for (const auto& cell : row)
      if ((std::isnan(cell.value) || h.scale == ColourScale::categorical) &&
          std::find(categories.begin(), categories.end(), cell.category) == categories.end())
        categories.push_back(cell.category);

  const double bar_height = std::clamp(grid_height, 120.0, 220.0);
  const double legend_bottom = grid_top + 18 + (scale.continuous() ? bar_height + 14 : 0) +
                               (kSwatch + 8) * categories.size();
  double width = legend_left + kLegendWidth;
  width = std::max(width, 2 * kMargin + text_width(h.title, kTitleCharWidth));
  for (const auto& line : h.subtitle) width = std::max(width, 2 * kMargin + text_width(line));
  const double height = std::max(grid_top + grid_height, legend_bottom) + kMargin;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n",
      width, height, width, height);
  svg += fmt::format("<path d=\"M0 0H{:.0f}V{:.0f}H0z\" fill=\"#ffffff\"/>\n", width, height);
  svg += text(kMargin, title_y, h.title, "font-size=\"16\" font-weight=\"bold\"");
  for (size_t i = 0; i < h.subtitle.size(); ++i)
    svg += text(kMargin, subtitle_y + 16.0 * i, h.subtitle[i], "fill=\"#555555\"");

  svg += text(grid_left + grid_width / 2, x_label_y, h.x_label,
              "text-anchor=\"middle\" font-weight=\"bold\"");
  for (size_t c = 0; c < h.x_ticks.size() && c < columns; ++c)
    svg += text(grid_left + cell_width * (c + 0.5), x_ticks_y, h.x_ticks[c],
                "text-anchor=\"middle\"");
  const double y_label_x = kMargin + 12, y_label_y = grid_top + grid_height / 2;
  svg += text(y_label_x, y_label_y, h.y_label,
              fmt::format("text-anchor=\"middle\" font-weight=\"bold\" "
                          "transform=\"rotate(-90 {:.1f} {:.1f})\"",
                          y_label_x, y_label_y));
  for (size_t r = 0; r < h.y_ticks.size() && r < rows; ++r)
    svg += text(grid_left - 8, grid_top + kCellHeight * (r + 0.5) + 4, h.y_ticks[r],
                "text-anchor=\"end\"");

  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < columns && c < h.cells[r].size(); ++c) {
      const HeatmapCell& cell = h.cells[r][c];
      const std::string fill = scale.fill(cell);
      const double x = grid_left + cell_width * c, y = grid_top + kCellHeight * r;
      svg += "<g>";
      if (!cell.tooltip.empty()) svg += "<title>" + xml_escape(cell.tooltip) + "</title>";
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                         "fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"/>",
                         x, y, cell_width, kCellHeight, fill);
      svg += text(x + cell_width / 2, y + kCellHeight / 2 + 4, cell.text,
                  fmt::format("text-anchor=\"middle\" fill=\"{}\"", text_colour_on(fill)));
      svg += "</g>\n";
    }

  // Legend: a colour bar for the numbers, a swatch per category.
  double legend_y = grid_top;
  if (!h.legend_title.empty() || scale.continuous())
    svg += text(legend_left, legend_y + 4, h.legend_title, "font-weight=\"bold\"");
  legend_y += 18;
  if (scale.continuous()) {
    svg += "<defs><linearGradient id=\"legend-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    const double bottom = scale.bottom_position();
    for (int i = 0; i <= 10; ++i) {
      const double f = i / 10.0;
      svg += fmt::format("<stop offset=\"{:.2f}\" stop-color=\"{}\"/>", f,
                         scale.colour_at(bottom + (1 - bottom) * f));
    }
    svg += "</linearGradient></defs>\n";
    svg += fmt::format("<path d=\"M{:.1f} {:.1f}h{:.1f}v{:.1f}h{:.1f}z\" "
                       "fill=\"url(#legend-scale)\" stroke=\"#666\" stroke-width=\"0.5\"/>\n",
                       legend_left, legend_y, kBarWidth, bar_height, -kBarWidth);
    for (const auto& [value, position] : scale.ticks()) {
      const double y = legend_y + bar_height * (1 - (position - bottom) / (1 - bottom));
      svg += fmt::format("<path d=\"M{:.1f} {:.1f}h4\" stroke=\"#666\"/>\n",
                         legend_left + kBarWidth, y);
      svg += text(legend_left + kBarWidth + 8, y + 4, number(value));
    }
    legend_y += bar_height + 14;
  }
  for (const auto& category : categories) {
    svg += square(legend_left, legend_y, kSwatch, category_colour(category));
    svg += text(legend_left + kSwatch + 8, legend_y + kSwatch - 3, category);
    legend_y += kSwatch + 8;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace kprop
