/* The SVG renderer: a figure description (explainer/figure.py) in, one <svg> element out.
 *
 * The static figure is the same description drawn by matplotlib at build time, so every layout rule here is written
 * down in README.md ("The SVG renderer") for that renderer to follow, and every number the rules use (box, margins,
 * type sizes, stroke widths, dash, opacities, legend geometry, arrowheads) is read from STYLE: explainer/
 * figure_style.json, the file the static renderer reads too. Colours are roles: each mark carries the class
 * `explainer-color-<role>` and draws with currentColor; sandbox.css maps the roles to the light or dark palette.
 *
 * Exposes the global ExplainerRender = {renderFigure, STYLE, FIGURE_WIDTH, DEFAULT_HEIGHT, MARGINS, COLOR_ROLES}.
 */
(function (root) {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";

  // explainer/figure_style.json, written in here by the build (build_scripts/browser_files.py): the script carries
  // its style, so drawing needs no extra request and stays synchronous. The copy in the source tree is not runnable.
  const STYLE = /* explainer/figure_style.json */ null;
  if (!STYLE) throw new Error("render.js has no figure style: serve the copy the build writes (build_scripts/browser_files.py)");

  const FIGURE_WIDTH = STYLE.box.width;
  const DEFAULT_HEIGHT = STYLE.box.default_height;
  const MARGINS = STYLE.box.margins;
  const COLOR_ROLES = STYLE.color_roles;
  const FONT_SIZE = STYLE.font_size;
  const AXES = STYLE.axes;
  const LEGEND = STYLE.legend;
  const LEGEND_LABELLED = new Set(["line", "bars", "region", "heatmap"]);  // points, arrows: labelled beside them

  let figuresMade = 0;  // clip-path ids must be unique when several figures share a page
  let heatmapsMade = 0;  // and so must the heat maps' mask ids
  const HEATMAP_EVEN_PX = 0.01;  // edges this close to even spacing are even (render.js rounds to 0.01 px anyway)

  // ---- small helpers ------------------------------------------------------------------------------------------------

  function svg(name, attributes = {}, parent = null) {
    const element = document.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes)) {
      if (value !== null && value !== undefined) element.setAttribute(key, String(value));
    }
    if (parent) parent.appendChild(element);
    return element;
  }

  function px(value) {
    return Math.round(value * 100) / 100;
  }

  function isNumber(value) {
    return typeof value === "number" && Number.isFinite(value);
  }

  function colorClass(role) {
    return `explainer-color-${COLOR_ROLES.includes(role) ? role : "ink"}`;
  }

  // ---- layout: plot area, equal aspect, scales -------------------------------------------------------------------

  function plotArea(height) {
    const left = MARGINS.left;
    const right = FIGURE_WIDTH - MARGINS.right;
    const top = MARGINS.top;
    const bottom = height - MARGINS.bottom;
    return {left, right, top, bottom, width: right - left, height: bottom - top};
  }

  function widen([low, high], span) {
    const centre = (low + high) / 2;
    return [centre - span / 2, centre + span / 2];
  }

  // Equal aspect (linear axes only): widen the shorter data range about its centre until one data unit spans the
  // same number of pixels on both axes.
  function dataLimits(axes, plot) {
    let xlim = axes.xlim.slice();
    let ylim = axes.ylim.slice();
    if (axes.aspect === "equal" && axes.xscale !== "log" && axes.yscale !== "log") {
      const xPixelsPerUnit = plot.width / (xlim[1] - xlim[0]);
      const yPixelsPerUnit = plot.height / (ylim[1] - ylim[0]);
      if (xPixelsPerUnit > yPixelsPerUnit) xlim = widen(xlim, plot.width / yPixelsPerUnit);
      else if (yPixelsPerUnit > xPixelsPerUnit) ylim = widen(ylim, plot.height / xPixelsPerUnit);
    }
    return {xlim, ylim};
  }

  // A data → pixel map; null for null, non-finite, and (on a log scale) non-positive values.
  function makeScale(kind, [low, high], [from, to]) {
    const transform = kind === "log" ? (v) => (v > 0 ? Math.log10(v) : null) : (v) => v;
    const a = transform(low);
    const b = transform(high);
    return (value) => {
      if (!isNumber(value)) return null;
      const t = transform(value);
      return t === null ? null : from + ((t - a) / (b - a)) * (to - from);
    };
  }

  // ---- axes ----------------------------------------------------------------------------------------------------

  // Ticks whose pixel position lies on the axis (half a pixel of slack for rounding); others are not drawn.
  function ticksInside(ticks, scale, from, to) {
    const [low, high] = [Math.min(from, to) - 0.5, Math.max(from, to) + 0.5];
    return (ticks || [])
      .map((tick) => ({label: tick.label, value: tick.value, at: scale(tick.value)}))
      .filter((tick) => tick.at !== null && tick.at >= low && tick.at <= high);
  }

  function drawGrid(group, plot, xTicks, yTicks) {
    const grid = svg("g", {class: "explainer-grid explainer-color-muted", stroke: "currentColor",
      "stroke-opacity": AXES.grid_opacity, "stroke-width": AXES.stroke_width, "stroke-linecap": AXES.cap}, group);
    for (const tick of xTicks) svg("line", {x1: px(tick.at), x2: px(tick.at), y1: plot.top, y2: plot.bottom}, grid);
    for (const tick of yTicks) svg("line", {x1: plot.left, x2: plot.right, y1: px(tick.at), y2: px(tick.at)}, grid);
  }

  function drawTicks(group, plot, xTicks, yTicks) {
    const marks = svg("g", {class: "explainer-ticks explainer-color-muted", stroke: "currentColor",
      "stroke-width": AXES.stroke_width, "stroke-linecap": AXES.cap}, group);
    const labels = svg("g", {class: "explainer-tick-labels explainer-color-ink", fill: "currentColor",
      "font-size": FONT_SIZE.tick}, group);
    const [tick, gap] = [AXES.tick_length, AXES.tick_label_gap];
    for (const {at, value, label: text} of xTicks) {
      svg("line", {x1: px(at), x2: px(at), y1: plot.bottom, y2: plot.bottom + tick}, marks);
      const label = svg("text", {x: px(at), y: plot.bottom + tick + gap, "text-anchor": "middle",
        "dominant-baseline": "hanging", "data-axis": "x", "data-value": value}, labels);
      label.textContent = text;
    }
    for (const {at, value, label: text} of yTicks) {
      svg("line", {x1: plot.left - tick, x2: plot.left, y1: px(at), y2: px(at)}, marks);
      const label = svg("text", {x: plot.left - tick - gap, y: px(at), "text-anchor": "end",
        "dominant-baseline": "middle", "data-axis": "y", "data-value": value}, labels);
      label.textContent = text;
    }
  }

  function drawLabels(group, plot, axes, height) {
    const labels = svg("g", {class: "explainer-axis-labels explainer-color-ink", fill: "currentColor"}, group);
    const centreX = px((plot.left + plot.right) / 2);
    const centreY = px((plot.top + plot.bottom) / 2);
    if (axes.xlabel) {
      svg("text", {x: centreX, y: height - AXES.xlabel_baseline_above_bottom, "text-anchor": "middle",
        "font-size": FONT_SIZE.label, class: "explainer-xlabel"}, labels).textContent = axes.xlabel;
    }
    if (axes.ylabel) {
      const x = AXES.ylabel_centre_x;
      svg("text", {x, y: centreY, "text-anchor": "middle", "dominant-baseline": "middle",
        transform: `rotate(-90 ${x} ${centreY})`, "font-size": FONT_SIZE.label, class: "explainer-ylabel"},
      labels).textContent = axes.ylabel;
    }
    if (axes.title) {
      svg("text", {x: centreX, y: STYLE.title.centre_y, "text-anchor": "middle", "dominant-baseline": "middle",
        "font-size": FONT_SIZE.title, "font-weight": STYLE.title.weight, class: "explainer-title"},
      labels).textContent = axes.title;
    }
  }

  function drawAxes(parent, plot, axes, scales, height) {
    const group = svg("g", {class: "explainer-axes"}, parent);
    const xTicks = ticksInside(axes.xticks, scales.x, plot.left, plot.right);
    const yTicks = ticksInside(axes.yticks, scales.y, plot.bottom, plot.top);
    if (axes.grid) drawGrid(group, plot, xTicks, yTicks);
    svg("path", {class: "explainer-spines explainer-color-muted", fill: "none", stroke: "currentColor",
      "stroke-width": AXES.stroke_width, "stroke-linecap": AXES.cap,
      d: `M${plot.left} ${plot.top}V${plot.bottom}H${plot.right}`}, group);
    drawTicks(group, plot, xTicks, yTicks);
    drawLabels(group, plot, axes, height);
  }

  // ---- marks ---------------------------------------------------------------------------------------------------

  // A stroke drawn like a `line` mark: STYLE.line's caps and joins, and its dash pattern when dashed.
  function stroke(name, attributes, mark, parent) {
    return svg(name, {...attributes, fill: "none", stroke: "currentColor", "stroke-width": mark.width,
      "stroke-linejoin": STYLE.line.join, "stroke-linecap": STYLE.line.cap,
      "stroke-dasharray": mark.dash ? STYLE.line.dash.join(" ") : null}, parent);
  }

  function drawLine(group, mark, scales) {
    let d = "";
    let penDown = false;
    for (let i = 0; i < mark.x.length; i += 1) {
      const x = scales.x(mark.x[i]);
      const y = scales.y(mark.y[i]);
      if (x === null || y === null) {
        penDown = false;  // a null breaks the line
        continue;
      }
      d += `${penDown ? "L" : "M"}${px(x)} ${px(y)}`;
      penDown = true;
    }
    stroke("path", {d}, mark, group);
  }

  function markLabel(group, text, x, y, anchor) {
    if (!text) return;
    svg("text", {x: px(x), y: px(y), "text-anchor": anchor, "dominant-baseline": "middle", fill: "currentColor",
      "font-size": FONT_SIZE.mark_label, class: "explainer-mark-label"}, group).textContent = text;
  }

  function drawArrow(group, mark, scales) {
    const [x1, y1] = [scales.x(mark.start[0]), scales.y(mark.start[1])];
    const [x2, y2] = [scales.x(mark.end[0]), scales.y(mark.end[1])];
    Object.assign(group.dataset, {x1: mark.start[0], y1: mark.start[1], x2: mark.end[0], y2: mark.end[1]});
    if ([x1, y1, x2, y2].includes(null)) return;
    const length = Math.hypot(x2 - x1, y2 - y1);
    if (length < 0.5) return;
    const rule = STYLE.arrow;
    const [ux, uy] = [(x2 - x1) / length, (y2 - y1) / length];
    const head = Math.min(length, rule.head_length_base + rule.head_length_per_width * mark.width);
    const [bx, by] = [x2 - ux * head, y2 - uy * head];
    const half = (rule.head_width_ratio * head) / 2;
    const [nx, ny] = [-uy * half, ux * half];
    stroke("line", {x1: px(x1), y1: px(y1), x2: px(bx), y2: px(by)}, {width: mark.width}, group);
    svg("polygon", {points: `${px(x2)},${px(y2)} ${px(bx + nx)},${px(by + ny)} ${px(bx - nx)},${px(by - ny)}`,
      fill: "currentColor", class: "explainer-arrowhead"}, group);
    const side = rule.label_side_threshold;
    const anchor = ux > side ? "start" : ux < -side ? "end" : "middle";
    const gap = anchor === "middle" ? rule.label_gap_vertical : rule.label_gap;
    markLabel(group, mark.label, x2 + ux * gap, y2 + uy * gap, anchor);
  }

  function drawPoint(group, mark, scales) {
    const [x, y] = [scales.x(mark.x), scales.y(mark.y)];
    Object.assign(group.dataset, {x: mark.x, y: mark.y});
    if (x === null || y === null) return;
    const radius = mark.size;
    svg("circle", {cx: px(x), cy: px(y), r: radius, fill: "currentColor"}, group);
    markLabel(group, mark.label, x + radius + STYLE.point.label_dx, y - radius + STYLE.point.label_dy, "start");
  }

  function drawBars(group, mark, scales, plot) {
    const halfWidth = mark.width / 2;
    for (let i = 0; i < mark.x.length; i += 1) {
      const [x, height] = [mark.x[i], mark.heights[i]];
      if (!isNumber(x) || !isNumber(height)) continue;
      const [left, right, top] = [scales.x(x - halfWidth), scales.x(x + halfWidth), scales.y(height)];
      if (left === null || right === null || top === null) continue;
      svg("rect", {x: px(Math.min(left, right)), width: px(Math.abs(right - left)), y: px(Math.min(top, plot.bottom)),
        height: px(Math.max(0, plot.bottom - top)), fill: "currentColor", "fill-opacity": STYLE.bars.opacity, "data-x": x,
        "data-height": height}, group);
    }
  }

  function drawText(group, mark, scales) {
    const [x, y] = [scales.x(mark.x), scales.y(mark.y)];
    Object.assign(group.dataset, {x: mark.x, y: mark.y});
    if (x === null || y === null) return;
    svg("text", {x: px(x), y: px(y), "text-anchor": mark.anchor || "start", "dominant-baseline": "middle",
      "font-size": mark.size, fill: "currentColor"}, group).textContent = mark.text;
  }

  function drawRegion(group, mark, scales) {
    const corners = [];
    for (let i = 0; i < mark.x.length; i += 1) {
      const [x, y] = [scales.x(mark.x[i]), scales.y(mark.y[i])];
      if (x !== null && y !== null) corners.push(`${px(x)},${px(y)}`);
    }
    if (corners.length < 3) return;
    svg("polygon", {points: corners.join(" "), fill: "currentColor", "fill-opacity": mark.opacity,
      stroke: "none"}, group);
  }

  // One rect per cell with a value: x and y are the cells' edges, `opacity` (decided in figure.py) its fill.
  // A heat map has hundreds of cells (the ablation lab's similarity view about 450): each rect's attributes are set
  // one by one, not through svg()'s object of them, which took a third more time; the fill is the group's.
  // A heat map whose cells are evenly spaced on screen (linear axes) is one picture: one pixel per cell, white at the
  // cell's opacity, stretched over the map without smoothing and used as the mask of a single rect in currentColor.
  // That is about a millisecond to build where one <rect> per cell took several (the ablation lab's similarity view
  // has about 440 cells, redrawn on every change). Cells of uneven size on screen are drawn one rect each.
  function drawHeatmap(group, mark, scales) {
    const xs = mark.x.map(scales.x);
    const ys = mark.y.map(scales.y);
    group.setAttribute("fill", "currentColor");
    if (evenlySpaced(xs) && evenlySpaced(ys)) drawHeatmapPicture(group, mark, xs, ys);
    else drawHeatmapCells(group, mark, xs, ys);
  }

  function evenlySpaced(edges) {
    if (edges.includes(null)) return false;
    const step = (edges[edges.length - 1] - edges[0]) / (edges.length - 1);
    return edges.every((edge, i) => Math.abs(edge - (edges[0] + i * step)) <= HEATMAP_EVEN_PX);
  }

  function drawHeatmapPicture(group, mark, xs, ys) {
    const [rows, columns] = [ys.length - 1, xs.length - 1];
    const canvas = document.createElement("canvas");
    [canvas.width, canvas.height] = [columns, rows];
    const context = canvas.getContext("2d");
    const picture = context.createImageData(columns, rows);
    const pixels = picture.data;  // RGBA, row by row from the top; 0 (transparent) where a cell is empty
    const flipX = xs[columns] < xs[0];
    const flipY = ys[rows] < ys[0];  // on screen y grows downwards: usually the first row is the bottom one
    mark.opacity.forEach((values, i) => values.forEach((opacity, j) => {
      if (!isNumber(opacity)) return;
      const at = 4 * ((flipY ? rows - 1 - i : i) * columns + (flipX ? columns - 1 - j : j));
      pixels.fill(255, at, at + 3);
      pixels[at + 3] = Math.round(Math.min(Math.max(opacity, 0), 1) * 255);
    }));
    context.putImageData(picture, 0, 0);
    heatmapsMade += 1;
    const maskId = `explainer-heatmap-${heatmapsMade}`;
    const box = {x: px(Math.min(xs[0], xs[columns])), y: px(Math.min(ys[0], ys[rows])),
      width: px(Math.abs(xs[columns] - xs[0])), height: px(Math.abs(ys[rows] - ys[0]))};
    const mask = svg("mask", {id: maskId, maskUnits: "userSpaceOnUse", ...box}, group);
    svg("image", {href: canvas.toDataURL("image/png"), ...box, preserveAspectRatio: "none",
      style: "image-rendering: pixelated", "data-rows": rows, "data-columns": columns}, mask);
    svg("rect", {...box, mask: `url(#${maskId})`}, group);
  }

  function drawHeatmapCells(group, mark, xs, ys) {
    const spans = (edges) => edges.slice(1).map((end, i) => {
      const start = edges[i];
      return start === null || end === null ? null : [px(Math.min(start, end)), px(Math.abs(end - start))];
    });
    const [columns, rows] = [spans(xs), spans(ys)];
    rows.forEach((row, i) => columns.forEach((column, j) => {
      const opacity = mark.opacity[i][j];
      if (!isNumber(opacity) || row === null || column === null) return;
      svg("rect", {x: column[0], y: row[0], width: column[1], height: row[1], "fill-opacity": opacity,
        "data-row": i, "data-column": j, "data-value": mark.values[i][j]}, group);
    }));
  }

  const DRAW = {line: drawLine, arrow: drawArrow, point: drawPoint, bars: drawBars, text: drawText, region: drawRegion,
    heatmap: drawHeatmap};

  function drawMarks(parent, marks, scales, plot, clipId) {
    const layer = svg("g", {class: "explainer-marks", "clip-path": `url(#${clipId})`}, parent);
    marks.forEach((mark, index) => {
      const group = svg("g", {"data-mark": mark.type, "data-index": index, class: colorClass(mark.color)}, layer);
      const draw = DRAW[mark.type];
      if (draw) draw(group, mark, scales, plot);
    });
  }

  // ---- legend --------------------------------------------------------------------------------------------------

  // A line segment in the line's width and dash, a ramp of squares for a heat map, else one square.
  function legendSwatch(entry, mark, x, y) {
    const [swatch, square] = [LEGEND.swatch, LEGEND.square];
    if (mark.type === "line") {
      stroke("line", {x1: x, x2: x + swatch, y1: y, y2: y}, mark, entry);
    } else if (mark.type === "heatmap") {
      const step = swatch / LEGEND.heatmap_ramp.length;
      LEGEND.heatmap_ramp.forEach((opacity, i) => svg("rect", {x: px(x + i * step), y: y - square / 2, width: px(step),
        height: square, fill: "currentColor", "fill-opacity": opacity}, entry));
    } else {
      const opacity = mark.type === "bars" ? STYLE.bars.opacity : Math.max(mark.opacity, LEGEND.min_fill_opacity);
      svg("rect", {x: x + (swatch - square) / 2, y: y - square / 2, width: square, height: square,
        fill: "currentColor", "fill-opacity": opacity}, entry);
    }
  }

  // Top-right inside the plot. Text is not measured (the element is not in a document yet): widths are estimated.
  function drawLegend(parent, marks, plot) {
    const labelled = marks.map((mark, index) => ({mark, index}))
      .filter(({mark}) => LEGEND_LABELLED.has(mark.type) && mark.label);
    if (!labelled.length) return;
    const [padding, row, size] = [LEGEND.padding, LEGEND.row, FONT_SIZE.legend];
    const textWidth = Math.max(...labelled.map(({mark}) => mark.label.length)) * size * LEGEND.char_width;
    const width = Math.ceil(2 * padding + LEGEND.swatch + LEGEND.label_gap + textWidth);
    const height = 2 * padding + labelled.length * row - (row - size);
    const [left, top] = [plot.right - LEGEND.inset - width, plot.top + LEGEND.inset];
    const legend = svg("g", {class: "explainer-legend", "data-legend": ""}, parent);
    svg("rect", {x: left, y: top, width, height, rx: LEGEND.corner_radius, class: "explainer-legend-box",
      fill: "#ffffff", "fill-opacity": LEGEND.box_opacity}, legend);
    labelled.forEach(({mark, index}, i) => {
      const y = top + padding + size / 2 + i * row;
      const entry = svg("g", {class: colorClass(mark.color), "data-legend-entry": mark.label, "data-index": index},
        legend);
      legendSwatch(entry, mark, left + padding, y);
      svg("text", {x: left + padding + LEGEND.swatch + LEGEND.label_gap, y, "dominant-baseline": "middle",
        "font-size": size, class: "explainer-color-ink", fill: "currentColor"}, entry).textContent = mark.label;
    });
  }

  // ---- the figure ----------------------------------------------------------------------------------------------

  /** Draw a figure description as an <svg> element (not yet in the document). */
  function renderFigure(description, options = {}) {
    const height = options.height || DEFAULT_HEIGHT;
    const plot = plotArea(height);
    const axes = description.axes;
    const {xlim, ylim} = dataLimits(axes, plot);
    const scales = {
      x: makeScale(axes.xscale, xlim, [plot.left, plot.right]),
      y: makeScale(axes.yscale, ylim, [plot.bottom, plot.top]),
    };
    figuresMade += 1;
    const clipId = `explainer-clip-${figuresMade}`;
    const root = svg("svg", {xmlns: SVG_NS, viewBox: `0 0 ${FIGURE_WIDTH} ${height}`, width: FIGURE_WIDTH, height,
      class: "explainer-figure explainer-color-ink", role: "img", "aria-label": options.label || axes.title || "Figure",
      "data-xlim": xlim.join(" "), "data-ylim": ylim.join(" ")});
    const clip = svg("clipPath", {id: clipId}, svg("defs", {}, root));
    svg("rect", {x: plot.left, y: plot.top, width: plot.width, height: plot.height}, clip);
    drawAxes(root, plot, axes, scales, height);
    drawMarks(root, description.marks || [], scales, plot, clipId);
    drawLegend(root, description.marks || [], plot);
    return root;
  }

  root.ExplainerRender = Object.freeze({renderFigure, STYLE, FIGURE_WIDTH, DEFAULT_HEIGHT, MARGINS, COLOR_ROLES});
})(globalThis);
