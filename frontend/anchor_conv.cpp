// Convolutions and pooling: windowed reductions over NCHW tensors. Index
// expressions are written the way the workload language's suite writes them
// (no `* 1` for unit strides, no guard without padding) so that the loop IR
// carries no arithmetic the model does not need.
#include <fmt/core.h>

#include "anchor.h"
#include "pad_fold.h"

namespace tunefarm::frontend {
namespace {

using ir::Expr;

struct Window {
  int64_t n, c, h, w;     // input
  int64_t r, s;           // kernel
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh() const { return (h + pt + pb - dh * (r - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (s - 1) - 1) / sw + 1; }
  bool padded() const { return pt || pl || pb || pr; }
};

// ONNX's attributes of a windowed operator into `win` (kernel already set).
Status ReadWindow(const OnnxGraph& g, const GraphNode& n, Window* win, bool dilations) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, g.IntsAttr(n, "strides", {1, 1}));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dil, g.IntsAttr(n, "dilations", {1, 1}));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> pads, g.IntsAttr(n, "pads", {0, 0, 0, 0}));
  TF_ASSIGN_OR_RETURN(std::string auto_pad, g.StringAttr(n, "auto_pad", "NOTSET"));
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) {
    return g.NodeError(n, "strides and dilations need 2 values and pads 4 for a 2-D window");
  }
  if (!dilations && (dil[0] != 1 || dil[1] != 1)) return g.NodeError(n, "dilated pooling is not supported");
  win->sh = strides[0], win->sw = strides[1], win->dh = dil[0], win->dw = dil[1];
  win->pt = pads[0], win->pl = pads[1], win->pb = pads[2], win->pr = pads[3];
  if (auto_pad == "VALID") {
    win->pt = win->pl = win->pb = win->pr = 0;
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto same = [](int64_t in, int64_t stride, int64_t extent, int64_t* lo, int64_t* hi, bool upper) {
      int64_t out = (in + stride - 1) / stride;
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
      *lo = upper ? total / 2 : total - total / 2;
      *hi = total - *lo;
    };
    bool upper = auto_pad == "SAME_UPPER";
    same(win->h, win->sh, win->dh * (win->r - 1) + 1, &win->pt, &win->pb, upper);
    same(win->w, win->sw, win->dw * (win->s - 1) + 1, &win->pl, &win->pr, upper);
  } else if (auto_pad != "NOTSET") {
    return g.NodeError(n, "unknown auto_pad '" + auto_pad + "'");
  }
  if (win->sh < 1 || win->sw < 1 || win->dh < 1 || win->dw < 1 || win->oh() < 1 || win->ow() < 1) {
    return g.NodeError(n, "its strides, dilations and pads leave no output");
  }
  return Status::OK();
}

// oh * stride + r * dilation - pad, without the terms that are 1 or 0.
Expr WindowIndex(const ir::Var& o, int64_t stride, const ir::Var& k, int64_t dilation, int64_t pad) {
  Expr e = stride == 1 ? Expr(o) : o * Expr(stride);
  e = e + (dilation == 1 ? Expr(k) : k * Expr(dilation));
  return pad ? e - Expr(pad) : e;
}

// X[n, c, ih, iw], guarded to `pad_value` outside the input when padded.
Expr WindowLoad(const ir::Buffer& x, const Window& win, Expr n, Expr c, Expr ih, Expr iw, Expr pad_value) {
  Expr load = ir::Load::Make(x, {n, c, ih, iw});
  if (!win.padded()) return load;
  Expr inside = ir::And::Make(ir::And::Make(ir::GE::Make(ih, Expr(int64_t{0})), ir::LT::Make(ih, Expr(win.h))),
                              ir::And::Make(ir::GE::Make(iw, Expr(int64_t{0})), ir::LT::Make(iw, Expr(win.w))));
  return ir::Select::Make(inside, load, pad_value);
}

std::string WindowName(const Window& win) {
  std::string s = fmt::format("_h{}", win.h);
  if (win.w != win.h) s += fmt::format("_w{}", win.w);
  s += fmt::format("_s{}", win.sh);
  if (win.sw != win.sh) s += fmt::format("x{}", win.sw);
  if (win.dh != 1 || win.dw != 1) s += fmt::format("_d{}", win.dh);
  if (win.n != 1) s += fmt::format("_n{}", win.n);
  return s;
}

}  // namespace

Result<AnchorResult> BuildConv(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  // A Pad folded into this Conv: read its input, and add its pads to ours.
  std::string x_name = n.inputs[0];
  std::array<int64_t, 4> extra_pads = {0, 0, 0, 0};
  const GraphValue& x_in = g.value(x_name);
  if (x_in.producer >= 0) {
    const GraphNode& pad = g.nodes()[size_t(x_in.producer)];
    if (std::optional<std::array<int64_t, 4>> p = ConvFoldablePad(g, pad)) {
      x_name = pad.inputs[0];
      extra_pads = *p;
    }
  }
  const GraphValue& xv = g.value(x_name);
  const GraphValue& wv = g.value(n.inputs[1]);
  if (xv.shape.size() != 4 || wv.shape.size() != 4) {
    return g.NodeError(n, fmt::format("tunefarm imports 2-D convolutions (rank-4 NCHW input and weights); input '{}' "
                                      "has rank {}",
                                      xv.name, xv.shape.size()));
  }
  Window win{xv.shape[0], xv.shape[1], xv.shape[2], xv.shape[3], wv.shape[2], wv.shape[3]};
  TF_RETURN_IF_ERROR(ReadWindow(g, n, &win, /*dilations=*/true));
  win.pt += extra_pads[0], win.pl += extra_pads[1], win.pb += extra_pads[2], win.pr += extra_pads[3];
  TF_ASSIGN_OR_RETURN(int64_t group, g.IntAttr(n, "group", 1));
  int64_t k_out = wv.shape[0];
  if (group < 1 || win.c % group || k_out % group || wv.shape[1] != win.c / group) {
    return g.NodeError(n, fmt::format("group {} does not fit {} input channels, {} output channels and weights of {} "
                                      "channels per group",
                                      group, win.c, k_out, wv.shape[1]));
  }
  int64_t cpg = win.c / group, kpg = k_out / group;
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(x_name, xv.shape, "X"));
  TF_ASSIGN_OR_RETURN(ir::Buffer w, ctx.Input(n.inputs[1], wv.shape, "W"));
  bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();

  ir::Var nn = ctx.Axis("n"), k = ctx.Axis("k"), oh = ctx.Axis("h"), ow = ctx.Axis("w");
  ir::Var c = ctx.Axis("c"), r = ctx.Axis("r"), s = ctx.Axis("s");
  Expr ih = WindowIndex(oh, win.sh, r, win.dh, win.pt), iw = WindowIndex(ow, win.sw, s, win.dw, win.pl);
  Expr channel = cpg == 1 ? (kpg == 1 ? Expr(k) : k / Expr(kpg)) : (group == 1 ? Expr(c) : (k / Expr(kpg)) * Expr(cpg) + c);
  Expr body = WindowLoad(x, win, nn, channel, ih, iw, ir::FloatImm::Make(ir::DataType::Float(32), 0)) *
              ir::Load::Make(w, {k, cpg == 1 ? Expr(int64_t{0}) : Expr(c), r, s});
  std::vector<ir::Var> reduce = {r, s};
  std::vector<int64_t> extents = {win.r, win.s};
  if (cpg != 1) {
    reduce.insert(reduce.begin(), c);
    extents.insert(extents.begin(), cpg);
  }
  std::vector<int64_t> shape = {win.n, k_out, win.oh(), win.ow()};
  ir::Buffer acc = ctx.builder().Compute(ctx.ResultName(!has_bias), shape, {nn, k, oh, ow}, ReduceKind::kSum, reduce,
                                         extents, body);
  AnchorResult res;
  res.shape = shape;
  res.value = LoadOf(acc);
  res.stage = acc;
  if (has_bias) {
    TF_ASSIGN_OR_RETURN(ir::Buffer bias, ctx.Input(n.inputs[2], g.value(n.inputs[2]).shape, "B"));
    res.value = [acc, bias](const std::vector<Expr>& i) { return ir::Load::Make(acc, i) + ir::Load::Make(bias, {i[1]}); };
    res.stage = nullptr;
  }
  std::string kernel = fmt::format("{}x{}", win.r, win.s);
  if (cpg == 1 && kpg == 1) {
    res.op_class = "depthwise_conv2d";
    res.shape_name = fmt::format("dw{}_c{}{}", kernel, win.c, WindowName(win));
    res.summary = fmt::format("depthwise conv {} stride {}, {} channels at {}x{}", kernel, win.sh, win.c, win.h, win.w);
  } else {
    res.op_class = group == 1 ? "conv2d" : "grouped_conv2d";
    res.shape_name = fmt::format("conv{}_c{}_k{}{}{}", kernel, win.c, k_out, WindowName(win),
                                 group == 1 ? "" : fmt::format("_g{}", group));
    res.summary = fmt::format("conv {} stride {}, {}->{} channels at {}x{}{}", kernel, win.sh, win.c, k_out, win.h,
                              win.w, group == 1 ? "" : fmt::format(", {} groups", group));
  }
  if (has_bias) res.summary += ", bias";
  return res;
}

Result<AnchorResult> BuildPool(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  if (xv.shape.size() != 4) return g.NodeError(n, "tunefarm imports 2-D pooling (a rank-4 NCHW input)");
  bool global = n.op_type.rfind("Global", 0) == 0;
  bool is_max = n.op_type.find("Max") != std::string::npos;
  if (n.outputs.size() > 1) return g.NodeError(n, "its Indices output is not supported");
  Window win{xv.shape[0], xv.shape[1], xv.shape[2], xv.shape[3], xv.shape[2], xv.shape[3]};
  int64_t include_pad = 0;
  if (!global) {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, g.IntsAttr(n, "kernel_shape", {}));
    if (kernel.size() != 2) return g.NodeError(n, "kernel_shape must give 2 sizes");
    win.r = kernel[0], win.s = kernel[1];
    TF_RETURN_IF_ERROR(ReadWindow(g, n, &win, /*dilations=*/false));
    TF_ASSIGN_OR_RETURN(int64_t ceil_mode, g.IntAttr(n, "ceil_mode", 0));
    const std::vector<int64_t>& inferred = g.value(n.outputs[0]).shape;
    if (ceil_mode && (inferred[2] != win.oh() || inferred[3] != win.ow())) {
      return g.NodeError(n, "ceil_mode=1 adds a partial window here; tunefarm imports floor-mode pooling");
    }
    TF_ASSIGN_OR_RETURN(include_pad, g.IntAttr(n, "count_include_pad", 0));
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  ir::Var nn = ctx.Axis("n"), c = ctx.Axis("c"), oh = ctx.Axis("h"), ow = ctx.Axis("w");
  ir::Var r = ctx.Axis("r"), s = ctx.Axis("s");
  Expr ih = global ? Expr(r) : WindowIndex(oh, win.sh, r, 1, win.pt);
  Expr iw = global ? Expr(s) : WindowIndex(ow, win.sw, s, 1, win.pl);
  // Max pooling reads a padded tap at the nearest input row and column, which
  // lies in the same window: the maximum is exact without an infinity (which
  // the workload text cannot carry to a worker).
  auto clamp = [](Expr i, int64_t size) { return ir::Max::Make(ir::Min::Make(i, Expr(size - 1)), Expr(int64_t{0})); };
  std::vector<int64_t> shape = {win.n, win.c, global ? 1 : win.oh(), global ? 1 : win.ow()};
  bool plain = is_max;
  ir::Buffer acc = ctx.builder().Compute(ctx.ResultName(plain), shape, {nn, c, oh, ow},
                                         is_max ? ReduceKind::kMax : ReduceKind::kSum, {r, s}, {win.r, win.s},
                                         is_max && win.padded()
                                             ? ir::Load::Make(x, {nn, c, clamp(ih, win.h), clamp(iw, win.w)})
                                             : WindowLoad(x, win, nn, c, ih, iw, ir::FloatImm::Make(ir::DataType::Float(32), 0)));
  AnchorResult res;
  res.shape = shape;
  res.value = LoadOf(acc);
  res.stage = plain ? acc : nullptr;
  if (!is_max) {
    Window wcopy = win;
    bool exact = global || include_pad || !win.padded();
    res.value = [acc, wcopy, exact](const std::vector<Expr>& i) -> Expr {
      if (exact) return ir::Load::Make(acc, i) * ir::FloatImm::Make(ir::DataType::Float(32), 1.0 / double(wcopy.r * wcopy.s));
      // Taps inside the input: the window clipped to [0, H) x [0, W).
      auto taps = [](Expr o, int64_t stride, int64_t pad, int64_t k, int64_t size) {
        Expr lo = o * Expr(stride) - Expr(pad);
        return ir::Min::Make(lo + Expr(k), Expr(size)) - ir::Max::Make(lo, Expr(int64_t{0}));
      };
      Expr count = taps(i[2], wcopy.sh, wcopy.pt, wcopy.r, wcopy.h) * taps(i[3], wcopy.sw, wcopy.pl, wcopy.s, wcopy.w);
      return ir::Load::Make(acc, i) / ir::Cast::Make(ir::DataType::Float(32), count);
    };
  }
  res.op_class = "pool";
  std::string kind = is_max ? "max" : "avg";
  res.shape_name = global ? fmt::format("global_{}pool_c{}_h{}{}", kind, win.c, win.h,
                                        win.w != win.h ? fmt::format("_w{}", win.w) : "")
                          : fmt::format("{}pool{}x{}_c{}{}", kind, win.r, win.s, win.c, WindowName(win));
  res.summary = global ? fmt::format("global {} pool, {} channels at {}x{}", kind, win.c, win.h, win.w)
                       : fmt::format("{} pool {}x{} stride {}, {} channels at {}x{}", kind, win.r, win.s, win.sh, win.c,
                                     win.h, win.w);
  return res;
}

}  // namespace tunefarm::frontend
