// What every oneDNN peer of the benchmarks is made of: an engine and a
// stream that live as long as the ops made from them, a user buffer moved
// into the layout a primitive asks for (a reorder at setup, untimed), and a
// primitive wrapped as a OneDnnOp whose fetch reorders its result back into
// the user's layout. Shared by onednn_reference.cpp (the suite's and the
// layer suite's peers) and bench/models (a model task's peer); included only
// by sources compiled against oneDNN.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "onednn_reference.h"

namespace tunefarm::bench::onednn {

// Engine and stream live as long as any op made from them.
struct Context {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

// The user's buffer in the layout the primitive wants (a reorder at setup).
inline dnnl::memory Into(Context& c, const dnnl::memory::desc& want, dnnl::memory user) {
  if (want == user.get_desc()) return user;
  dnnl::memory m(want, c.eng);
  dnnl::reorder(user, m).execute(c.strm, user, m);
  c.strm.wait();
  return m;
}

// Wraps a primitive and its arguments; fetch reorders dst back to the user
// layout. A dst of its own memory is copied even when oneDNN chose the
// user's layout for it (a small grouped convolution gets plain nchw).
inline OneDnnOp Wrap(std::shared_ptr<Context> c, std::string what, dnnl::primitive prim,
                     std::unordered_map<int, dnnl::memory> args, dnnl::memory dst_user) {
  dnnl::memory dst = args.at(DNNL_ARG_DST);
  OneDnnOp op;
  op.what = std::move(what);
  op.run = [c, prim, args]() mutable {
    prim.execute(c->strm, args);
    c->strm.wait();
  };
  op.fetch = [c, dst, dst_user]() mutable {
    if (dst.get_data_handle() == dst_user.get_data_handle()) return;
    dnnl::reorder(dst, dst_user).execute(c->strm, dst, dst_user);
    c->strm.wait();
  };
  return op;
}

}  // namespace tunefarm::bench::onednn
