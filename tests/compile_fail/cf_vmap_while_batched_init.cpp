// vmap of a while loop whose condition on its initial carry depends on the examples (the loop's last
// operand is batched): each example would stop after its own number of steps, which kiln does not batch
// (docs/control_flow.md, "vmap"). The batching rule of the loop refuses it with one kiln: diagnostic naming
// the loop (vmap_no_rule; the regex also accepts vmap_while_batched_condition, the diagnostic of a condition
// that becomes batched inside the loop). A condition that is the same for every example (KILN_CF_OK) is one
// loop over the batch.
#include <kiln/kiln.hpp>

#include <cstdint>
#include <utility>

int main() {
    Eigen::VectorXd xs = Eigen::VectorXd::LinSpaced(4, 0.5, 2.0);
    auto f = [](auto const& x) {
        auto step = [](auto const& c) {
            auto const& [n, v] = c;
            return std::pair(n + kiln::c<std::int64_t{1}>, v * kiln::c<2.0>);
        };
#ifdef KILN_CF_OK
        auto more = [](auto const& c) { return c.first < kiln::c<std::int64_t{3}>; };
#else
        auto more = [](auto const& c) { return c.second < kiln::c<10.0>; };
#endif
        return kiln::while_loop(more, step, std::pair(kiln::c<std::int64_t{0}>, x)).second;
    };
    Eigen::VectorXd r = kiln::jit(kiln::vmap(f))(xs);
    return r.size() == 4 ? 0 : 1;
}
