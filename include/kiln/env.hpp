// kiln::env: how a graph is evaluated, never what is traced (that is decided by the argument types, so a
// graph's type does not depend on the environment).
//
//   kiln::env{}                                          one thread, no checks: the default
//   kiln::env{.device = kiln::thread_pool(2)}            large nodes evaluated by 2 threads
//   kiln::env{.debug_nans = true}                        kiln::numeric_error at the first NaN or Inf
//   kiln::env{.eager = true}                             every node computed on its own, one by one
//
//   auto f2 = kiln::jit(f, kiln::env{.debug_nans = true});   // pinned: f2 always runs so
//   kiln::default_env() = kiln::env{...};                    // the process default (set it before threads start)
//   { kiln::env_guard g(kiln::env{.eager = true}); ... }     // this thread's default, until g ends
//
// A jitted or compiled function without a pinned environment evaluates in the current thread's default.
//
// What is compiled in: a plain environment (one thread, no checks, not eager) evaluates exactly as if
// environments did not exist. The other settings each need a second evaluation code path per graph, so they
// are compiled where these are defined before including kiln; without them, asking for the setting throws
// std::logic_error naming the macro, whichever others are defined (docs/stages.md has the measurements):
//   KILN_DEBUG_NANS   debug_nans          KILN_THREADS   thread_pool devices          KILN_EAGER   eager
#ifndef KILN_ENV_HPP
#define KILN_ENV_HPP

#include <Eigen/Core>  // first: the pool's header includes Eigen/Core by a relative path
#include <unsupported/Eigen/CXX11/ThreadPool>

#include <kiln/errors.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>

namespace kiln {

// Where materialized nodes are evaluated: the calling thread (kiln::cpu), or a pool of threads that
// large nodes are split across (kiln::thread_pool(n)). Copies of a device share its pool.
class device {
public:
    constexpr device() = default;
    // The threads that evaluate a split node: the pool's and the calling thread, which takes a part too.
    int threads() const { return pool_ ? pool_->NumThreads() + 1 : 1; }
    Eigen::ThreadPool* pool() const { return pool_.get(); }

private:
    friend device thread_pool(int threads);
    explicit device(std::shared_ptr<Eigen::ThreadPool> pool) : pool_(std::move(pool)) {}
    std::shared_ptr<Eigen::ThreadPool> pool_;
};

// Single-threaded: every node on the calling thread.
inline device const cpu{};

// A pool for `threads` threads in all: the calling thread and threads - 1 workers. thread_pool(1) is cpu.
inline device thread_pool(int threads) {
    if (threads < 1) throw std::invalid_argument("kiln: thread_pool needs at least 1 thread");
    if (threads == 1) return device{};
    return device(std::make_shared<Eigen::ThreadPool>(threads - 1));
}

struct env {
    kiln::device device{};  // kiln::cpu
    // After each materialized node, check it for NaN and Inf and throw kiln::numeric_error naming the node
    // that made it (the first whose operands have none; an argument, if one was passed in) as as_text()
    // shows it. A NaN seen in a fused expression is traced to its node by evaluating the graph again
    // eagerly. (Only materialized values are checked: with eager = true, every node's.)
    bool debug_nans = false;
    // Evaluate op by op, every node into its own temporary, on the calling thread: for stepping through in
    // a debugger (kiln::detail::node_eval<..>::materialize is called once per node), as jax.disable_jit.
    bool eager = false;
};

namespace detail {
// Plain globals: reading them costs no guard (a function-local static would) and no TLS wrapper call.
inline env process_env{};
inline constinit thread_local env const* scoped_env = nullptr;
}  // namespace detail

// The process-wide default environment. Change it before other threads evaluate graphs.
inline env& default_env() { return detail::process_env; }

// The environment a call without a pinned one uses: the innermost env_guard of this thread, or the
// process default.
inline env const& current_env() { return detail::scoped_env ? *detail::scoped_env : detail::process_env; }

// Sets this thread's default environment until the guard is destroyed (guards nest).
class env_guard {
public:
    explicit env_guard(env e) : env_(std::move(e)), previous_(detail::scoped_env) { detail::scoped_env = &env_; }
    env_guard(env_guard const&) = delete;
    env_guard& operator=(env_guard const&) = delete;
    ~env_guard() { detail::scoped_env = previous_; }

private:
    env env_;
    env const* previous_;
};

}  // namespace kiln

#endif
