// Purpose: tests of the CPU MLP math: analytic gradients against central finite differences (float64), the float
// path against the float64 one, the loss by hand, and Adam against its closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "train/cpu_mlp.hpp"

namespace mgpu {
namespace {

struct Problem {
  MlpSpec model;
  int batch;
  std::vector<double> x, targets, parameters;
  cpu::DropoutKey dropout;
};

Problem make_problem(double drop_probability) {
  Problem p{custom_model({7, 6, 5, 3}, drop_probability), 4, {}, {}, {}, {}};
  p.x.resize(std::size_t(p.batch) * 7);
  p.targets.resize(std::size_t(p.batch) * 3);
  cpu::generate_samples<double>(11, 40, p.batch, 7, 3, p.x.data(), p.targets.data());
  p.parameters.resize(p.model.parameter_count());
  cpu::initialize_parameters(p.model, 11, 0, p.parameters.data());
  // Non-zero biases so their gradients are exercised away from the initial point.
  for (const DenseLayer& layer : p.model.layers())
    for (std::size_t i = 0; i < layer.bias_count(); ++i) p.parameters[layer.bias_offset + i] = 0.05 * (i % 3) - 0.02;
  p.dropout = cpu::DropoutKey{11, 0, 2, 40, static_cast<float>(drop_probability)};
  return p;
}

double loss_at(const Problem& p, const std::vector<double>& parameters) {
  cpu::MlpActivations<double> activations;
  cpu::mlp_forward(p.model, parameters.data(), p.x.data(), p.batch, p.dropout, activations);
  std::vector<double> unused(activations.output.size());
  return cpu::mse_loss_and_gradient(activations.output.data(), p.targets.data(), unused.size(), unused.data());
}

std::vector<double> analytic_gradient(const Problem& p) {
  cpu::MlpActivations<double> activations;
  cpu::mlp_forward(p.model, p.parameters.data(), p.x.data(), p.batch, p.dropout, activations);
  std::vector<double> grad_output(activations.output.size());
  cpu::mse_loss_and_gradient(activations.output.data(), p.targets.data(), grad_output.size(), grad_output.data());
  std::vector<double> gradients(p.parameters.size(), std::nan(""));
  cpu::mlp_backward(p.model, p.parameters.data(), p.x.data(), p.batch, activations, grad_output.data(),
                    p.dropout.drop_probability, gradients.data());
  return gradients;
}

void expect_matches_finite_differences(double drop_probability) {
  const Problem p = make_problem(drop_probability);
  const std::vector<double> gradients = analytic_gradient(p);
  const double h = 1e-6;
  double worst = 0;
  for (std::size_t i = 0; i < p.parameters.size(); ++i) {
    std::vector<double> plus = p.parameters, minus = p.parameters;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (loss_at(p, plus) - loss_at(p, minus)) / (2 * h);
    ASSERT_FALSE(std::isnan(gradients[i])) << "gradient " << i << " not written";
    worst = std::max(worst, std::fabs(numeric - gradients[i]) / std::max(1e-3, std::fabs(numeric)));
  }
  EXPECT_LT(worst, 1e-5) << "worst relative gradient error, dropout " << drop_probability;
}

TEST(CpuMlp, GradientsMatchFiniteDifferencesWithoutDropout) { expect_matches_finite_differences(0.0); }
TEST(CpuMlp, GradientsMatchFiniteDifferencesWithDropout) { expect_matches_finite_differences(0.3); }

TEST(CpuMlp, DropoutZeroesAndRescalesUnits) {
  const Problem with = make_problem(0.5);
  Problem without = make_problem(0.0);
  cpu::MlpActivations<double> a, b;
  cpu::mlp_forward(with.model, with.parameters.data(), with.x.data(), with.batch, with.dropout, a);
  cpu::mlp_forward(without.model, without.parameters.data(), without.x.data(), without.batch, without.dropout, b);
  int dropped = 0, scaled = 0;
  for (std::size_t i = 0; i < a.hidden[0].size(); ++i) {
    if (b.hidden[0][i] <= 0) continue;
    if (a.hidden[0][i] == 0)
      ++dropped;
    else if (std::fabs(a.hidden[0][i] - 2.0 * b.hidden[0][i]) < 1e-12)
      ++scaled;
    else
      ADD_FAILURE() << "unit " << i << " neither dropped nor scaled by 1/(1-p)";
  }
  EXPECT_GT(dropped, 0);
  EXPECT_GT(scaled, 0);
}

TEST(CpuMlp, FloatPathMatchesFloat64) {
  const Problem p = make_problem(0.3);
  const std::vector<double> reference = analytic_gradient(p);
  std::vector<float> x(p.x.begin(), p.x.end()), targets(p.targets.begin(), p.targets.end()),
      parameters(p.parameters.begin(), p.parameters.end());
  cpu::MlpActivations<float> activations;
  cpu::mlp_forward(p.model, parameters.data(), x.data(), p.batch, p.dropout, activations);
  std::vector<float> grad_output(activations.output.size()), gradients(parameters.size());
  cpu::mse_loss_and_gradient(activations.output.data(), targets.data(), grad_output.size(), grad_output.data());
  cpu::mlp_backward(p.model, parameters.data(), x.data(), p.batch, activations, grad_output.data(),
                    p.dropout.drop_probability, gradients.data());
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    error += (gradients[i] - reference[i]) * (gradients[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  EXPECT_LT(std::sqrt(error / norm), 1e-5);
}

TEST(CpuMlp, MseLossAndGradientByHand) {
  // Outputs 1, 2, -1 against targets 0.5, 3, -1: differences 0.5, -1, 0; loss (0.25 + 1 + 0) / 3, dL/dy = 2 diff / 3.
  // (The finite differences above check the gradient against the loss, not the loss itself.)
  const std::vector<double> y = {1.0, 2.0, -1.0}, targets = {0.5, 3.0, -1.0};
  std::vector<double> grad(3, 0.0);
  EXPECT_DOUBLE_EQ(cpu::mse_loss_and_gradient(y.data(), targets.data(), 3, grad.data()), 1.25 / 3.0);
  EXPECT_DOUBLE_EQ(grad[0], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(grad[1], -2.0 / 3.0);
  EXPECT_DOUBLE_EQ(grad[2], 0.0);
}

TEST(CpuMlp, AdamMatchesClosedForm) {
  // With a constant gradient g, m_t = (1 - b1^t) g and v_t = (1 - b2^t) g^2, so every bias-corrected step moves
  // the parameter by lr * |g| / (|g| + eps) against the gradient's sign.
  const AdamSettings adam;
  std::vector<double> parameters = {1.0, -2.0}, gradients = {0.5, -0.25}, m(2, 0.0), v(2, 0.0);
  for (int t = 1; t <= 3; ++t) cpu::adam_update(adam, t, 2, parameters.data(), gradients.data(), m.data(), v.data());
  EXPECT_NEAR(parameters[0], 1.0 - 3.0 * adam.learning_rate * 0.5 / (0.5 + adam.epsilon), 1e-12);
  EXPECT_NEAR(parameters[1], -2.0 + 3.0 * adam.learning_rate * 0.25 / (0.25 + adam.epsilon), 1e-12);
  EXPECT_NEAR(m[0], (1 - std::pow(double(adam.beta1), 3)) * 0.5, 1e-12);
  EXPECT_NEAR(v[1], (1 - std::pow(double(adam.beta2), 3)) * 0.0625, 1e-12);
}

}  // namespace
}  // namespace mgpu
