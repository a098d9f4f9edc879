// kiln's forward values against an independent oracle: shared/oracle/cases.json, computed with PyTorch
// autograd in float64 from the functions in shared/oracle/cases.py. Each case is mirrored here in C++ on
// kiln operations, evaluated by kiln::jit, and compared within 1e-12 relative. Every mirrored case is
// run twice: with the plain Eigen types the oracle's shapes suggest, and with other Eigen forms (fixed
// sizes, row-major Maps over the oracle's own buffers, column-vector Maps) that kiln binds without a copy.
//
// The file is KILN_ORACLE_JSON, defined for this target in tests/CMakeLists.txt as
// ${PROJECT_SOURCE_DIR}/../shared/oracle/cases.json (CI clones the repository with shared/ beside it).
// A missing or unreadable file FAILS every test here, with the path in the message: it never skips.
//
// Mirrored: elementwise_chain, logsumexp_rows, softmax_xent, mlp_mse, logistic, normal_logpdf,
// matmul_frobenius, leaky_relu_max, column_center, unused_param, shared_dag, scalar_args, pose_residual,
// optional_bias_present, optional_bias_absent (b a std::optional: one graph per case, each pruned).
// Every case is mirrored (OracleForward.EveryCaseIsClassified fails if the oracle gains a case not listed here).
//
// Notes on the mirrors:
// - Broadcasting in kiln is decided by static extents only, so the 1 x n biases of mlp_mse are passed as
//   Eigen::RowVectorXd (or fixed 1 x n): a MatrixXd that is 1 x 8 at run time must match exactly.
// - log1p(t) is written log(1 + t), logsumexp along rows as log(sum(exp(x), axis<1>)) (the inputs are in
//   [-3, 3]), x ** 2 as x * x; the operand order follows cases.py so the roundings are the same ones.
// - normal_logpdf's 0.5 * log(2 pi) is the correctly rounded constant; Python's 0.5 * math.log(2 * math.pi)
//   is 1 ulp below it, far inside the tolerance.
// - shared_dag is checked as one 12-level graph and as three 4-level graphs (see OracleForward.SharedDag).
// - pose_residual builds the skew matrix with kiln::at and kiln::matrix<3, 3>, as cases.py stacks k[i]; its
//   0 * k[0] entries are the constant 0 (the same value: k is finite).
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#ifndef KILN_ORACLE_JSON
#error "KILN_ORACLE_JSON must be the path of shared/oracle/cases.json (tests/CMakeLists.txt defines it)"
#endif

namespace {

// ---------------------------------------------------------------------------------------------------
// A small JSON reader: objects, arrays, numbers, strings, true/false/null. Enough for cases.json.
// ---------------------------------------------------------------------------------------------------
struct Json {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;        // the elements of an array, or the values of an object
    std::vector<std::string> keys;  // the keys of an object, parallel to items

    Json const* find(std::string_view key) const {
        if (kind != Kind::object) return nullptr;
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == key) return &items[i];
        return nullptr;
    }
    Json const& at(std::string_view key) const {
        if (Json const* v = find(key)) return *v;
        throw std::runtime_error("oracle JSON: no member \"" + std::string(key) + "\"");
    }
};

class JsonParser {
public:
    explicit JsonParser(std::string_view text) : s_(text) {}

    Json parse_document() {
        Json v = parse_value(0);
        skip_ws();
        if (pos_ != s_.size()) fail("trailing characters after the document");
        return v;
    }

private:
    std::string_view s_;
    std::size_t pos_ = 0;

    [[noreturn]] void fail(std::string const& what) const {
        throw std::runtime_error("oracle JSON: " + what + " at offset " + std::to_string(pos_));
    }
    void skip_ws() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    void literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
        pos_ += word.size();
    }

    Json parse_value(int depth) {
        if (depth > 64) fail("nesting too deep");
        skip_ws();
        Json v;
        switch (peek()) {
            case '{':
                v.kind = Json::Kind::object;
                ++pos_;
                skip_ws();
                if (peek() == '}') {
                    ++pos_;
                    return v;
                }
                for (;;) {
                    skip_ws();
                    v.keys.push_back(parse_string());
                    skip_ws();
                    expect(':');
                    v.items.push_back(parse_value(depth + 1));
                    skip_ws();
                    if (peek() == ',') {
                        ++pos_;
                        continue;
                    }
                    expect('}');
                    return v;
                }
            case '[':
                v.kind = Json::Kind::array;
                ++pos_;
                skip_ws();
                if (peek() == ']') {
                    ++pos_;
                    return v;
                }
                for (;;) {
                    v.items.push_back(parse_value(depth + 1));
                    skip_ws();
                    if (peek() == ',') {
                        ++pos_;
                        continue;
                    }
                    expect(']');
                    return v;
                }
            case '"':
                v.kind = Json::Kind::string;
                v.text = parse_string();
                return v;
            case 't':
                literal("true");
                v.kind = Json::Kind::boolean;
                v.boolean = true;
                return v;
            case 'f':
                literal("false");
                v.kind = Json::Kind::boolean;
                return v;
            case 'n':
                literal("null");
                return v;
            default:
                v.kind = Json::Kind::number;
                v.number = parse_number();
                return v;
        }
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    unsigned parse_hex4() {
        if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
        unsigned cp = 0;
        auto const r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_ + 4) fail("invalid \\u escape");
        pos_ += 4;
        return cp;
    }

    std::string parse_string() {
        expect('"');
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            char const c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            switch (char const e = s_[pos_++]) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = parse_hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
                        pos_ += 2;
                        unsigned const low = parse_hex4();
                        if (low < 0xDC00 || low >= 0xE000) fail("invalid surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail(std::string("invalid escape '\\") + e + "'");
            }
        }
    }

    // JSON's number grammar, then std::from_chars: exact and independent of the locale.
    double parse_number() {
        std::size_t const start = pos_;
        auto digits = [&] {
            std::size_t const from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == from) fail("invalid number");
        };
        if (peek() == '-') ++pos_;
        digits();
        if (peek() == '.') {
            ++pos_;
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            digits();
        }
        double value = 0;
        auto const r = std::from_chars(s_.data() + start, s_.data() + pos_, value);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_) fail("number out of range");
        return value;
    }
};

// ---------------------------------------------------------------------------------------------------
// The oracle file, read once. Any problem becomes a failure of each test that needs it (never a skip).
// ---------------------------------------------------------------------------------------------------
struct Oracle {
    Json root;
    std::string error;  // empty when the file was read and has a "cases" object
};

Oracle const& oracle() {
    static Oracle const o = [] {
        Oracle r;
        std::string const path = KILN_ORACLE_JSON;
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            r.error = "cannot open the oracle " + path +
                      " (KILN_ORACLE_JSON, from tests/CMakeLists.txt). It is shared/oracle/cases.json, "
                      "expected beside the repository; regenerate it with shared/oracle/cases.py.";
            return r;
        }
        std::ostringstream buffer;
        buffer << in.rdbuf();
        try {
            r.root = JsonParser(buffer.str()).parse_document();
            if (r.root.at("cases").kind != Json::Kind::object) throw std::runtime_error("\"cases\" is not an object");
        } catch (std::exception const& e) {
            r.error = "cannot read the oracle " + path + ": " + e.what();
        }
        return r;
    }();
    return o;
}

// The case `name`, or nullptr after a failure that says why.
Json const* oracle_case(std::string_view name) {
    Oracle const& o = oracle();
    if (!o.error.empty()) {
        ADD_FAILURE() << o.error;
        return nullptr;
    }
    Json const* c = o.root.at("cases").find(name);
    if (c == nullptr) ADD_FAILURE() << "the oracle " KILN_ORACLE_JSON " has no case \"" << name << "\"";
    return c;
}

double expected_output(Json const& c) {
    Json const& v = c.at("output");
    if (v.kind != Json::Kind::number) throw std::runtime_error("oracle JSON: \"output\" is not a number");
    return v.number;
}

// An input: row-major data with its shape ([] a scalar, [n] a vector, [r, c] a matrix).
struct Tensor {
    std::string name;
    std::vector<long> shape;
    std::vector<double> data;

    // shape [n] is an n x 1 column, shape [] is 1 x 1
    long rows() const { return shape.empty() ? 1 : shape[0]; }
    long cols() const { return shape.size() < 2 ? 1 : shape[1]; }

    void require_shape(std::vector<long> const& expected) const {
        if (shape != expected) {
            std::ostringstream msg;
            msg << "oracle input " << name << " has shape [";
            for (std::size_t i = 0; i < shape.size(); ++i) msg << (i ? "," : "") << shape[i];
            msg << "], not the one its C++ mirror expects";
            throw std::runtime_error(msg.str());
        }
    }
};

Tensor input(Json const& c, std::string const& name) {
    Json const& v = c.at("inputs").at(name);
    Tensor t;
    t.name = name;
    for (Json const& d : v.at("shape").items) {
        if (d.kind != Json::Kind::number || d.number < 0 || d.number != std::floor(d.number))
            throw std::runtime_error("oracle input " + name + ": bad shape");
        t.shape.push_back(static_cast<long>(d.number));
    }
    if (t.shape.size() > 2) throw std::runtime_error("oracle input " + name + ": rank above 2");
    for (Json const& d : v.at("data").items) {
        if (d.kind != Json::Kind::number) throw std::runtime_error("oracle input " + name + ": non-numeric data");
        t.data.push_back(d.number);
    }
    if (static_cast<long>(t.data.size()) != t.rows() * t.cols())
        throw std::runtime_error("oracle input " + name + ": data does not match the shape");
    return t;
}

// A static input that is a plain JSON integer (scalar_args' n).
int integer_input(Json const& c, std::string const& name) {
    Json const& v = c.at("inputs").at(name);
    if (v.kind != Json::Kind::number || v.number != std::floor(v.number))
        throw std::runtime_error("oracle input " + name + " is not an integer");
    return static_cast<int>(v.number);
}

// shape [] -> double
double scalar(Tensor const& t) {
    t.require_shape({});
    return t.data[0];
}

// shape [r, c] -> MatrixXd filled row-major; shape [n] -> n x 1
Eigen::MatrixXd matrix(Tensor const& t) {
    if (t.shape.empty()) throw std::runtime_error("oracle input " + t.name + " is a scalar, not a matrix");
    Eigen::MatrixXd m(t.rows(), t.cols());
    for (long i = 0; i < t.rows(); ++i)
        for (long j = 0; j < t.cols(); ++j) m(i, j) = t.data[static_cast<std::size_t>(i * t.cols() + j)];
    return m;
}

// shape [n] or [n, 1] -> VectorXd (n x 1, statically one column)
Eigen::VectorXd column_vector(Tensor const& t) {
    if (t.shape.empty() || t.cols() != 1) throw std::runtime_error("oracle input " + t.name + " is not a column");
    return Eigen::Map<Eigen::VectorXd const>(t.data.data(), t.rows());
}

// shape [1, n] -> RowVectorXd (1 x n, statically one row: it broadcasts over rows)
Eigen::RowVectorXd row_vector(Tensor const& t) {
    if (t.shape.size() != 2 || t.rows() != 1) throw std::runtime_error("oracle input " + t.name + " is not 1 x n");
    return Eigen::Map<Eigen::RowVectorXd const>(t.data.data(), t.cols());
}

// shape [R, C] (or [R] when C is 1) -> a fixed-size matrix
template <int R, int C>
Eigen::Matrix<double, R, C> fixed(Tensor const& t) {
    if (t.shape.empty() || t.rows() != R || t.cols() != C)
        throw std::runtime_error("oracle input " + t.name + " is not " + std::to_string(R) + " x " + std::to_string(C));
    Eigen::Matrix<double, R, C> m;
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) m(i, j) = t.data[static_cast<std::size_t>(i * C + j)];
    return m;
}

// A row-major view of the oracle's own buffer: no copy.
using RowMajorMap = Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const>;
RowMajorMap row_major_map(Tensor const& t) {
    if (t.shape.empty()) throw std::runtime_error("oracle input " + t.name + " is a scalar, not a matrix");
    return RowMajorMap(t.data.data(), t.rows(), t.cols());
}

// A rank-0 kiln result is a double; compare it within 1e-12 relative.
template <class T>
void expect_oracle(T const& actual, Json const& c) {
    static_assert(std::is_same_v<T, double>, "a rank-0 kiln output must come back as a double");
    double const expected = expected_output(c);
    EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected));
}

// ---------------------------------------------------------------------------------------------------
// The mirrors of cases.py, one generic function each (shared by both forms of each test).
// ---------------------------------------------------------------------------------------------------

// torch.sum(torch.logsumexp(x, dim=1))
constexpr auto logsumexp_rows = [](auto const& x) {
    return kiln::sum(kiln::log(kiln::sum(kiln::exp(x), kiln::axis<1>)));
};

// torch.mean(-torch.sum(onehot * torch.log_softmax(logits, dim=1), dim=1))
constexpr auto softmax_xent = [](auto const& logits, auto const& onehot) {
    auto const lse = kiln::log(kiln::sum(kiln::exp(logits), kiln::axis<1>));  // m x 1, broadcast over columns
    auto const log_softmax = logits - lse;
    return kiln::mean(-kiln::sum(onehot * log_softmax, kiln::axis<1>));
};

// h = tanh(x @ w1 + b1); torch.mean((h @ w2 + b2 - t) ** 2)
constexpr auto mlp_mse = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2,
                            auto const& t) {
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    auto const d = kiln::matmul(h, w2) + b2 - t;
    return kiln::mean(d * d);
};

// torch.mean(torch.log1p(torch.exp(-y * (x @ w + b))))
constexpr auto logistic = [](auto const& x, auto const& w, auto const& b, auto const& y) {
    return kiln::mean(kiln::log(kiln::c<1> + kiln::exp(-y * (kiln::matmul(x, w) + b))));
};

// z = (x - mu) / sigma; torch.sum(-0.5 * z * z - torch.log(sigma) - 0.5 * math.log(2 * math.pi))
constexpr auto normal_logpdf = [](auto const& x, auto const& mu, auto const& sigma) {
    auto const z = (x - mu) / sigma;
    return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(sigma) - kiln::c<0.91893853320467274178032973640562>);
};

// torch.sum((x - torch.mean(x, dim=0, keepdim=True)) ** 2)
constexpr auto column_center = [](auto const& x) {
    auto const d = x - kiln::mean(x, kiln::axis<0>);  // 1 x cols, broadcast over rows
    return kiln::sum(d * d);
};

// torch.sum(x * z); y is never used
constexpr auto unused_param = [](auto const& x, auto const& /*y*/, auto const& z) { return kiln::sum(x * z); };

// `Levels` times y = 0.5 * y * y + 0.25 * y: each level uses y three times, so the graph is a shared DAG
template <int Levels>
constexpr auto dag_levels(auto const& y) {
    if constexpr (Levels == 0) return y;
    else return dag_levels<Levels - 1>(kiln::c<0.5> * y * y + kiln::c<0.25> * y);
}
[[maybe_unused]] constexpr auto shared_dag = [](auto const& x) { return kiln::sum(dag_levels<12>(x)); };

// The same 12 levels as three graphs of 4, evaluated one after the other (the same roundings: each
// level is the same operations on the same values, materialised or fused). Builds with debug info cannot
// hold the 12-level graph: see SharedDag below.
constexpr auto dag_4_levels = [](auto const& y) { return dag_levels<4>(y); };
constexpr auto dag_4_levels_sum = [](auto const& y) { return kiln::sum(dag_levels<4>(y)); };
template <class X>
double shared_dag_staged(X const& x) {
    auto const y4 = kiln::jit(dag_4_levels)(x);
    auto const y8 = kiln::jit(dag_4_levels)(y4);
    return kiln::jit(dag_4_levels_sum)(y8);
}

// torch.sum(alpha * x ** 2) * n, n an int (traced as i32; the product promotes to f64)
constexpr auto scalar_args = [](auto const& x, auto const& alpha, auto const& n) {
    return kiln::sum(alpha * (x * x)) * n;
};

// ---------------------------------------------------------------------------------------------------
// The oracle itself
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, FileIsReadable) {
    Oracle const& o = oracle();
    ASSERT_TRUE(o.error.empty()) << o.error;
    Json const* generator = o.root.find("generator");
    ASSERT_NE(generator, nullptr) << KILN_ORACLE_JSON " has no \"generator\"";
    EXPECT_EQ(generator->text.rfind("PyTorch", 0), 0u) << generator->text;
}

// Every case in the oracle is either mirrored here or listed as skipped at the top of this file.
TEST(OracleForward, EveryCaseIsClassified) {
    Oracle const& o = oracle();
    ASSERT_TRUE(o.error.empty()) << o.error;
    std::vector<std::string> const mirrored = {"elementwise_chain", "logsumexp_rows", "softmax_xent",
                                               "mlp_mse",           "logistic",       "normal_logpdf",
                                               "matmul_frobenius",  "column_center",  "unused_param",
                                               "shared_dag",        "scalar_args",    "leaky_relu_max",
                                               "pose_residual",     "optional_bias_present", "optional_bias_absent"};
    std::vector<std::string> const skipped = {};
    Json const& cases = o.root.at("cases");
    for (std::string const& name : cases.keys) {
        bool const known = std::find(mirrored.begin(), mirrored.end(), name) != mirrored.end() ||
                           std::find(skipped.begin(), skipped.end(), name) != skipped.end();
        EXPECT_TRUE(known) << "oracle case \"" << name << "\" is neither mirrored nor listed as skipped";
    }
    for (std::string const& name : mirrored) EXPECT_NE(cases.find(name), nullptr) << name;
}

// ---------------------------------------------------------------------------------------------------
// logsumexp_rows: x 6 x 9 in [-3, 3]
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, LogsumexpRows) {
    Json const* c = oracle_case("logsumexp_rows");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({6, 9});
    expect_oracle(kiln::jit(logsumexp_rows)(matrix(x)), *c);
}

TEST(OracleForward, LogsumexpRowsRowMajorMap) {
    Json const* c = oracle_case("logsumexp_rows");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({6, 9});
    expect_oracle(kiln::jit(logsumexp_rows)(row_major_map(x)), *c);
}

// ---------------------------------------------------------------------------------------------------
// softmax_xent: logits 8 x 4, onehot 8 x 4
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, SoftmaxXent) {
    Json const* c = oracle_case("softmax_xent");
    ASSERT_NE(c, nullptr);
    Tensor const logits = input(*c, "logits"), onehot = input(*c, "onehot");
    logits.require_shape({8, 4});
    onehot.require_shape({8, 4});
    expect_oracle(kiln::jit(softmax_xent)(matrix(logits), matrix(onehot)), *c);
}

TEST(OracleForward, SoftmaxXentFixedAndRowMajorMap) {
    Json const* c = oracle_case("softmax_xent");
    ASSERT_NE(c, nullptr);
    Tensor const logits = input(*c, "logits"), onehot = input(*c, "onehot");
    expect_oracle(kiln::jit(softmax_xent)(fixed<8, 4>(logits), row_major_map(onehot)), *c);
}

// ---------------------------------------------------------------------------------------------------
// mlp_mse: x 10 x 3, w1 3 x 8, b1 1 x 8, w2 8 x 2, b2 1 x 2, t 10 x 2
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, MlpMse) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w1 = input(*c, "w1"), b1 = input(*c, "b1"), w2 = input(*c, "w2"),
                 b2 = input(*c, "b2"), t = input(*c, "t");
    x.require_shape({10, 3});
    w1.require_shape({3, 8});
    b1.require_shape({1, 8});
    w2.require_shape({8, 2});
    b2.require_shape({1, 2});
    t.require_shape({10, 2});
    expect_oracle(kiln::jit(mlp_mse)(matrix(x), matrix(w1), row_vector(b1), matrix(w2), row_vector(b2), matrix(t)),
                  *c);
}

TEST(OracleForward, MlpMseFixedSize) {
    Json const* c = oracle_case("mlp_mse");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w1 = input(*c, "w1"), b1 = input(*c, "b1"), w2 = input(*c, "w2"),
                 b2 = input(*c, "b2"), t = input(*c, "t");
    expect_oracle(kiln::jit(mlp_mse)(fixed<10, 3>(x), fixed<3, 8>(w1), fixed<1, 8>(b1), fixed<8, 2>(w2),
                                     fixed<1, 2>(b2), fixed<10, 2>(t)),
                  *c);
}

// ---------------------------------------------------------------------------------------------------
// logistic: x 12 x 4, w 4 x 1, b a scalar (a double argument), y 12 x 1 of +-1
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, Logistic) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w = input(*c, "w"), b = input(*c, "b"), y = input(*c, "y");
    x.require_shape({12, 4});
    w.require_shape({4, 1});
    y.require_shape({12, 1});
    expect_oracle(kiln::jit(logistic)(matrix(x), matrix(w), scalar(b), matrix(y)), *c);
}

TEST(OracleForward, LogisticRowMajorMapFixedAndVector) {
    Json const* c = oracle_case("logistic");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), w = input(*c, "w"), b = input(*c, "b"), y = input(*c, "y");
    expect_oracle(kiln::jit(logistic)(row_major_map(x), fixed<4, 1>(w), scalar(b), column_vector(y)), *c);
}

// ---------------------------------------------------------------------------------------------------
// normal_logpdf: x 20 x 1, mu and sigma scalars (double arguments)
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, NormalLogpdf) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), mu = input(*c, "mu"), sigma = input(*c, "sigma");
    x.require_shape({20, 1});
    expect_oracle(kiln::jit(normal_logpdf)(matrix(x), scalar(mu), scalar(sigma)), *c);
}

TEST(OracleForward, NormalLogpdfVectorMap) {
    Json const* c = oracle_case("normal_logpdf");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), mu = input(*c, "mu"), sigma = input(*c, "sigma");
    x.require_shape({20, 1});
    // a 20 x 1 row-major buffer is also column-major: map it as a vector, no copy
    Eigen::Map<Eigen::VectorXd const> const xv(x.data.data(), x.rows());
    expect_oracle(kiln::jit(normal_logpdf)(xv, scalar(mu), scalar(sigma)), *c);
}

// ---------------------------------------------------------------------------------------------------
// column_center: x 9 x 4
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, ColumnCenter) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({9, 4});
    expect_oracle(kiln::jit(column_center)(matrix(x)), *c);
}

TEST(OracleForward, ColumnCenterRowMajorMap) {
    Json const* c = oracle_case("column_center");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({9, 4});
    expect_oracle(kiln::jit(column_center)(row_major_map(x)), *c);
}

// ---------------------------------------------------------------------------------------------------
// unused_param: x 3 x 3, y 2 x 2 (never used: pruned), z 3 x 3
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, UnusedParam) {
    Json const* c = oracle_case("unused_param");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x"), yt = input(*c, "y"), zt = input(*c, "z");
    xt.require_shape({3, 3});
    yt.require_shape({2, 2});
    zt.require_shape({3, 3});
    Eigen::MatrixXd const x = matrix(xt), y = matrix(yt), z = matrix(zt);
    using traced_t = decltype(kiln::trace(unused_param, x, y, z));
    static_assert(traced_t::num_args() == 3);
    static_assert(traced_t::num_params() == 2);
    static_assert(traced_t::param_map()[0] == 0 && traced_t::param_map()[1] == 2);
    expect_oracle(kiln::jit(unused_param)(x, y, z), *c);
}

TEST(OracleForward, UnusedParamFixedAndRowMajorMap) {
    Json const* c = oracle_case("unused_param");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x"), yt = input(*c, "y"), zt = input(*c, "z");
    auto const x = fixed<3, 3>(xt);
    auto const y = row_major_map(yt);
    auto const z = fixed<3, 3>(zt);
    static_assert(decltype(kiln::trace(unused_param, x, y, z))::num_params() == 2);
    expect_oracle(kiln::jit(unused_param)(x, y, z), *c);
}

// ---------------------------------------------------------------------------------------------------
// shared_dag: x 16 x 1 in [0, 0.9], 12 levels
//
// The 12-level graph is also checked as three 4-level graphs run one after another (the same roundings).
// Known limit: g++ 12 with debug information (-g) needs time and memory exponential in the depth of a
// shared graph, so this file (like tests/test_graph.cpp) is built with -g only by clang (CI's asan
// configuration); see docs/architecture.md.
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, SharedDag) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x");
    xt.require_shape({16, 1});
    Eigen::MatrixXd const x = matrix(xt);
    // shared, not expanded into a tree: x, two constants, four nodes per level and the sum
    static_assert(decltype(kiln::trace(shared_dag, x))::num_nodes() <= 3 + 4 * 12 + 1);
    expect_oracle(kiln::jit(shared_dag)(x), *c);
    expect_oracle(shared_dag_staged(x), *c);
}

TEST(OracleForward, SharedDagFixedSize) {
    Json const* c = oracle_case("shared_dag");
    ASSERT_NE(c, nullptr);
    Tensor const xt = input(*c, "x");
    auto const x = fixed<16, 1>(xt);
    expect_oracle(kiln::jit(shared_dag)(x), *c);
    expect_oracle(shared_dag_staged(x), *c);
}

// ---------------------------------------------------------------------------------------------------
// scalar_args: x 4 x 4, alpha a scalar (double), n = 3 (static int, traced as i32)
// ---------------------------------------------------------------------------------------------------

TEST(OracleForward, ScalarArgs) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), alpha = input(*c, "alpha");
    x.require_shape({4, 4});
    int const n = integer_input(*c, "n");
    expect_oracle(kiln::jit(scalar_args)(matrix(x), scalar(alpha), n), *c);
}

TEST(OracleForward, ScalarArgsFixedRowMajor) {
    Json const* c = oracle_case("scalar_args");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), alpha = input(*c, "alpha");
    int const n = integer_input(*c, "n");
    Eigen::Matrix<double, 4, 4, Eigen::RowMajor> const xr = fixed<4, 4>(x);
    expect_oracle(kiln::jit(scalar_args)(xr, scalar(alpha), n), *c);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// elementwise_chain: x, y 7 x 5; sum(sin(x) * y + exp(-x * x))
// matmul_frobenius: a 4 x 6, b 6 x 3, c 4 x 3; sum((a b) * c) + sqrt(sum((a^T a)^2))
// ---------------------------------------------------------------------------------------------------
namespace {
constexpr auto elementwise_chain = [](auto const& x, auto const& y) {
    return kiln::sum(kiln::sin(x) * y + kiln::exp(-x * x));
};
constexpr auto matmul_frobenius = [](auto const& a, auto const& b, auto const& c) {
    auto const ata = kiln::matmul(kiln::transpose(a), a);
    return kiln::sum(kiln::matmul(a, b) * c) + kiln::sqrt(kiln::sum(ata * ata));
};
}  // namespace

TEST(OracleForward, ElementwiseChain) {
    Json const* c = oracle_case("elementwise_chain");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), y = input(*c, "y");
    x.require_shape({7, 5});
    y.require_shape({7, 5});
    expect_oracle(kiln::jit(elementwise_chain)(matrix(x), matrix(y)), *c);
    expect_oracle(kiln::jit(elementwise_chain)(row_major_map(x), fixed<7, 5>(y)), *c);
}

TEST(OracleForward, MatmulFrobenius) {
    Json const* c = oracle_case("matmul_frobenius");
    ASSERT_NE(c, nullptr);
    Tensor const a = input(*c, "a"), b = input(*c, "b"), cc = input(*c, "c");
    a.require_shape({4, 6});
    b.require_shape({6, 3});
    cc.require_shape({4, 3});
    expect_oracle(kiln::jit(matmul_frobenius)(matrix(a), matrix(b), matrix(cc)), *c);
    expect_oracle(kiln::jit(matmul_frobenius)(fixed<4, 6>(a), row_major_map(b), fixed<4, 3>(cc)), *c);
}

// leaky_relu_max: x, y 5 x 5; sum(where(x > 0, x, 0.01 * x)) + sum(maximum(x, y))
namespace {
constexpr auto leaky_relu_max = [](auto const& x, auto const& y) {
    return kiln::sum(kiln::where(x > kiln::c<0>, x, kiln::c<0.01> * x)) + kiln::sum(kiln::maximum(x, y));
};
}  // namespace

TEST(OracleForward, LeakyReluMax) {
    Json const* c = oracle_case("leaky_relu_max");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), y = input(*c, "y");
    x.require_shape({5, 5});
    y.require_shape({5, 5});
    expect_oracle(kiln::jit(leaky_relu_max)(matrix(x), matrix(y)), *c);
    expect_oracle(kiln::jit(leaky_relu_max)(fixed<5, 5>(x), row_major_map(y)), *c);
}

// pose_residual: w, t, p, q 3-vectors; || R(w) p + t - q ||^2 with R from the axis-angle w (Rodrigues)
namespace {
constexpr auto pose_residual = [](auto const& w, auto const& t, auto const& p, auto const& q) {
    auto const th = kiln::sqrt(kiln::sum(w * w));
    auto const k = w / th;
    auto const k0 = kiln::at<0>(k);
    auto const k1 = kiln::at<1>(k);
    auto const k2 = kiln::at<2>(k);
    auto const skew = kiln::matrix<3, 3>(kiln::c<0.0>, -k2, k1,
                                         k2, kiln::c<0.0>, -k0,
                                         -k1, k0, kiln::c<0.0>);
    auto const rot = kiln::eye<3>() + kiln::sin(th) * skew + (kiln::c<1> - kiln::cos(th)) * kiln::matmul(skew, skew);
    auto const r = kiln::matmul(rot, p) + t - q;
    return kiln::sum(r * r);
};
}  // namespace

TEST(OracleForward, PoseResidual) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    for (Tensor const* v : {&w, &t, &p, &q}) v->require_shape({3});
    expect_oracle(kiln::jit(pose_residual)(column_vector(w), column_vector(t), column_vector(p), column_vector(q)), *c);
}

TEST(OracleForward, PoseResidualFixedSize) {
    Json const* c = oracle_case("pose_residual");
    ASSERT_NE(c, nullptr);
    Tensor const w = input(*c, "w"), t = input(*c, "t"), p = input(*c, "p"), q = input(*c, "q");
    // fixed 3-vectors, as a robotics residual is written; one a Map over the oracle's buffer
    Eigen::Map<Eigen::Vector3d const> const qm(q.data.data());
    expect_oracle(kiln::jit(pose_residual)(fixed<3, 1>(w), fixed<3, 1>(t), fixed<3, 1>(p), qm), *c);
}

// ---------------------------------------------------------------------------------------------------
// optional_bias_present / optional_bias_absent: x 3 x 4, b a std::optional 3 x 4 (None in the second case).
// One function, two graphs: f receives kiln::none when b is empty, and each graph is pruned on its own.
// ---------------------------------------------------------------------------------------------------
namespace {
constexpr auto optional_bias = [](auto const& x, auto const& b) {
    if constexpr (kiln::is_none<decltype(b)>) return kiln::sum(kiln::tanh(x));
    else return kiln::sum(kiln::tanh(x + b));
};
}  // namespace

TEST(OracleForward, OptionalBiasPresent) {
    Json const* c = oracle_case("optional_bias_present");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x"), b = input(*c, "b");
    x.require_shape({3, 4});
    b.require_shape({3, 4});
    std::optional<Eigen::MatrixXd> const bias = matrix(b);
    expect_oracle(kiln::jit(optional_bias)(matrix(x), bias), *c);
    std::optional<Eigen::Matrix<double, 3, 4>> const fixed_bias = fixed<3, 4>(b);
    expect_oracle(kiln::jit(optional_bias)(row_major_map(x), fixed_bias), *c);
    using T = decltype(kiln::trace(optional_bias, matrix(x), bias));
    static_assert(std::variant_alternative_t<1, T>::num_params() == 2);  // x and b
}

TEST(OracleForward, OptionalBiasAbsent) {
    Json const* c = oracle_case("optional_bias_absent");
    ASSERT_NE(c, nullptr);
    Tensor const x = input(*c, "x");
    x.require_shape({3, 4});
    ASSERT_EQ(c->at("inputs").at("b").kind, Json::Kind::null);
    std::optional<Eigen::MatrixXd> const none;
    expect_oracle(kiln::jit(optional_bias)(matrix(x), none), *c);
    expect_oracle(kiln::jit(optional_bias)(fixed<3, 4>(x), std::nullopt), *c);
    using T = decltype(kiln::trace(optional_bias, matrix(x), none));
    static_assert(std::variant_alternative_t<0, T>::num_params() == 1);  // b pruned: x only
    EXPECT_EQ(kiln::trace(optional_bias, matrix(x), none).index(), 0u);
}
