// Copyright (c) 2026, torch_npu API-consistency kit contributors.
// SPDX-License-Identifier: BSD-3-Clause
//
// The simulated NPU: torch's PrivateUse1 backend (renamed "npu" by the Python side) with its memory on
// the host and its kernels the CPU's. Written for the kit; facts from torch's own out-of-tree device
// tests (torch_openreg) and the installed headers.
//
//  - memory: a host allocator whose pointers say device npu:N; two devices, npu:0 and npu:1;
//  - a device guard, PrivateUse1 hooks (autograd and torch.accelerator need them), one generator per device;
//  - kernels of its own only where the CPU's cannot serve: creation, copies across the device boundary,
//    resize_/set_, and views (a view is a new tensor over the same host storage);
//  - every other op runs the CPU kernel on CPU tensors that ALIAS the device's memory (no copy in, so
//    the kernel sees the device tensor's own strides); a new result's memory is handed over to the device
//    (no copy out); sparse COO/CSR/CSC/BSR/BSC tensors are served the same way over their member tensors.
//  - random ops draw from the device's own generator: the CPU kernel runs with the CPU default
//    generator's state swapped for the device's.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/NestedTensorImpl.h>
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/autocast_mode.h>
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/library.h>

#include <array>
#include <cstring>
#include <mutex>

namespace simnpu {

using at::Tensor;
constexpr c10::DeviceIndex kDevices = 2;
constexpr auto kNpu = c10::DeviceType::PrivateUse1;
thread_local c10::DeviceIndex current = 0;

void check_index(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < kDevices, "simulated NPU: invalid device index ", static_cast<int>(index),
              " (devices: npu:0, npu:1)");
}

// ------------------------------------------------------------------------------------------- memory
struct HostAllocator final : at::Allocator {
  at::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    return {data, data, &c10::free_cpu, c10::Device(kNpu, current)};
  }
  at::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count) std::memcpy(dest, src, count);
  }
};
HostAllocator allocator;
REGISTER_ALLOCATOR(kNpu, &allocator);

// -------------------------------------------------------------------------------------------- guard
struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kNpu; }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kNpu, current); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kNpu, "simulated NPU: not an npu device: ", d);
    if (d.index() >= 0) {
      check_index(d.index());
      current = d.index();
    }
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < kDevices) current = d.index();
  }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return c10::Stream(c10::Stream::DEFAULT, s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return kDevices; }
  // events: the device is synchronous, so an event is complete once recorded
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (*event == nullptr) *event = reinterpret_cast<void*>(1);
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
  double elapsedTime(void*, void*, const c10::DeviceIndex) const override { return 0.0; }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);

// ------------------------------------------------------------------------------------------ random
struct Generator : public at::CPUGeneratorImpl {
  explicit Generator(c10::DeviceIndex index) : at::CPUGeneratorImpl(c10::default_rng_seed_val) {
    device_ = c10::Device(kNpu, index);
    key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  }
 private:
  Generator* clone_impl() const override {
    auto* copy = new Generator(device_.index());
    copy->set_engine(const_cast<Generator*>(this)->engine());
    copy->set_next_float_normal_sample(const_cast<Generator*>(this)->next_float_normal_sample());
    copy->set_next_double_normal_sample(const_cast<Generator*>(this)->next_double_normal_sample());
    return copy;
  }
};

const at::Generator& default_generator(c10::DeviceIndex index) {
  static std::array<at::Generator, kDevices> generators = {at::make_generator<Generator>(0),
                                                           at::make_generator<Generator>(1)};
  if (index < 0) index = current;
  check_index(index);
  return generators[index];
}

// Runs a CPU kernel with the CPU default generator's state replaced by `gen`'s, then hands the advanced
// state back to `gen` and restores the CPU's: the CPU's own stream is untouched by device draws.
struct SwapRng {
  at::CPUGeneratorImpl* cpu = nullptr;
  at::CPUGeneratorImpl* dev = nullptr;
  at::mt19937 saved;
  std::optional<float> saved_float;
  std::optional<double> saved_double;
  explicit SwapRng(const at::Generator& gen) {
    dev = static_cast<at::CPUGeneratorImpl*>(gen.unsafeGetGeneratorImpl());
    cpu = at::check_generator<at::CPUGeneratorImpl>(at::detail::getDefaultCPUGenerator());
    move(cpu, dev, true);
  }
  void move(at::CPUGeneratorImpl* to, at::CPUGeneratorImpl* from, bool save) {
    if (save) {
      saved = to->engine();
      saved_float = to->next_float_normal_sample();
      saved_double = to->next_double_normal_sample();
    }
    to->set_engine(from->engine());
    to->set_next_float_normal_sample(from->next_float_normal_sample());
    to->set_next_double_normal_sample(from->next_double_normal_sample());
  }
  ~SwapRng() {
    move(dev, cpu, false);
    cpu->set_engine(saved);
    cpu->set_next_float_normal_sample(saved_float);
    cpu->set_next_double_normal_sample(saved_double);
  }
};

// -------------------------------------------------------------------------------------------- hooks
struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override { return default_generator(index); }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    if (index < 0) index = current;
    check_index(index);
    return at::make_generator<Generator>(index);
  }
  at::Device getDeviceFromPtr(void*) const override { return c10::Device(kNpu, current); }
  bool isPinnedPtr(const void*) const override { return false; }
  at::Allocator* getPinnedMemoryAllocator() const override { return at::getCPUAllocator(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return kDevices; }
  void setCurrentDevice(c10::DeviceIndex index) const override { check_index(index); current = index; }
  c10::DeviceIndex getCurrentDevice() const override { return current; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    auto old = current;
    setCurrentDevice(index);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override { return exchangeDevice(index); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), nbytes);
  }
};

int register_hooks() {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return 0;
}
static int hooks_registered = register_hooks();

// ------------------------------------------------------------------------------------ host aliases
void release_storage(void* ctx) { delete static_cast<c10::Storage*>(ctx); }

// A CPU tensor over the same host memory as the device tensor `t` (same sizes, strides, offset, bits).
Tensor cpu_alias(const Tensor& t) {
  const c10::Storage& storage = t.storage();
  auto* keep = new c10::Storage(storage);
  c10::DataPtr data(storage.mutable_data(), keep, &release_storage, c10::Device(c10::kCPU));
  // resizable with the CPU's allocator: a kernel that grows an out= alias gets new host memory, written back
  c10::Storage host(c10::Storage::use_byte_size_t(), storage.nbytes(), std::move(data), at::getCPUAllocator(), true);
  auto alias = at::detail::make_tensor<c10::TensorImpl>(std::move(host), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                        t.dtype());
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  alias._set_conj(t.is_conj());
  alias._set_neg(t.is_neg());
  return alias;
}

// A device tensor over `base`'s storage with `like`'s dtype, geometry and bits (a view of `base`).
Tensor view_over(const Tensor& base, const Tensor& like) {
  auto view = at::detail::make_tensor<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(base.storage()),
                                                       base.key_set(), like.dtype());
  view.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  view._set_conj(like.is_conj());
  view._set_neg(like.is_neg());
  return view;
}

Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                     std::optional<at::Layout> layout, std::optional<at::Device> device,
                     std::optional<bool> pin_memory) {
  c10::OptionalDeviceGuard guard(device);
  auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(size, stride, &allocator, keys, c10::dtype_or_default(dtype));
}

Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
             std::optional<at::Device> device, std::optional<bool> pin_memory,
             std::optional<at::MemoryFormat> memory_format) {
  c10::OptionalDeviceGuard guard(device);
  auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(size, &allocator, keys, c10::dtype_or_default(dtype), memory_format);
}

// The device's tensor for a CPU result: its memory handed over when nothing else holds it, else copied.
Tensor adopt(Tensor out, c10::Device device) {
  if (out.layout() != c10::kStrided) {
    TORCH_CHECK(false, "simulated NPU: a result with layout ", out.layout(), " cannot live on the device");
  }
  c10::StorageImpl* impl = out.storage().unsafeGetStorageImpl();
  if (out.use_count() == 1 && out.storage().use_count() == 1 && impl->data_ptr().device().is_cpu()) {
    size_t nbytes = impl->nbytes();
    c10::DataPtr data = impl->set_data_ptr(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
    data.unsafe_set_device(device);
    c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), &allocator, true);
    auto result = at::detail::make_tensor<c10::TensorImpl>(
        std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), out.dtype());
    result.unsafeGetTensorImpl()->set_sizes_and_strides(out.sizes(), out.strides(), out.storage_offset());
    result._set_conj(out.is_conj());
    result._set_neg(out.is_neg());
    return result;
  }
  c10::DeviceGuard guard(device);
  auto result = empty_strided(out.sizes(), out.strides(), out.scalar_type(), std::nullopt, device, std::nullopt);
  cpu_alias(result).copy_(out);
  return result;
}

// ------------------------------------------------------------------------------------------ copies
Tensor copy_from(const Tensor& self, const Tensor& dst, bool non_blocking) {
  TORCH_CHECK(self.device().type() == kNpu || self.is_cpu(), "simulated NPU: cannot copy from ", self.device());
  TORCH_CHECK(dst.device().type() == kNpu || dst.is_cpu(), "simulated NPU: cannot copy to ", dst.device());
  if (dst.numel() == 0) return dst;
  Tensor from = self.device().type() == kNpu ? cpu_alias(self) : self;
  Tensor to = dst.device().type() == kNpu ? cpu_alias(dst) : dst;
  to.copy_(from);
  return dst;
}

Tensor copy_from_and_resize(const Tensor& self, const Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

const Tensor& resize_(const Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat> format) {
  at::native::resize_(self, size, format);
  return self;
}

Tensor& set_empty(Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &allocator, true);
  storage.set_data_ptr_noswap(allocator.allocate(0));
  return self.set_(storage, 0, {0}, {});
}

// ------------------------------------------------------------------------------------- convolution
// at::_convolution sends a backend it does not know to the *_overrideable ops: the CPU's convolution on
// aliases of the device memory serves them.
std::optional<Tensor> host_opt(const std::optional<Tensor>& t) {
  if (!t.has_value() || !t->defined()) return t;
  return t->device().type() == kNpu ? cpu_alias(*t) : *t;
}
Tensor host(const Tensor& t) { return t.defined() && t.device().type() == kNpu ? cpu_alias(t) : t; }

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                   c10::IntArrayRef output_padding, int64_t groups) {
  auto out = at::convolution(host(input), host(weight), host_opt(bias), stride, padding, dilation, transposed,
                             output_padding, groups);
  return adopt(std::move(out), input.device());
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
    const Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
    bool transposed, c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  std::vector<int64_t> bias_sizes{grad_output.size(1)};
  auto grads = at::convolution_backward(host(grad_output), host(input), host(weight), bias_sizes, stride, padding,
                                        dilation, transposed, output_padding, groups, output_mask);
  auto back = [&](Tensor t) { return t.defined() ? adopt(std::move(t), input.device()) : t; };
  return {back(std::get<0>(grads)), back(std::get<1>(grads)), back(std::get<2>(grads))};
}

#include "simnpu_fallback.h"  // the fallback: every other op, sparse and nested layouts

// ---------------------------------------------------------------------------------------- autocast
// torch.autocast("npu"): the policy lists torch keeps for every backend (lower precision for matmul-like
// ops, float32 for the sensitive ones, promotion for the mixed ones); every other op passes through.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
#if defined(AT_FORALL_LOWER_PRECISION_FP) && defined(KERNEL_PRIVATEUSEONE)
namespace autocast_policy {
using namespace at::autocast;
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define SIMNPU_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define SIMNPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define SIMNPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(SIMNPU_LOWER)
  AT_FORALL_FP32(SIMNPU_FP32)
  AT_FORALL_PROMOTE(SIMNPU_PROMOTE)
}
}  // namespace autocast_policy
#endif

// ------------------------------------------------------------------------- what torch.npu calls
int64_t current_device() { return current; }
void set_device(int64_t index) {
  check_index(static_cast<c10::DeviceIndex>(index));
  current = static_cast<c10::DeviceIndex>(index);
}
Tensor get_rng_state(int64_t index) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}
void set_rng_state(int64_t index, const Tensor& state) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}
void manual_seed(int64_t index, int64_t seed) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(static_cast<uint64_t>(seed));
}
int64_t initial_seed(int64_t index) {
  return static_cast<int64_t>(default_generator(static_cast<c10::DeviceIndex>(index)).current_seed());
}
int64_t seed(int64_t index) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  return static_cast<int64_t>(gen.seed());
}

TORCH_LIBRARY(simnpu, m) {
  m.def("current_device", &current_device);
  m.def("set_device", &set_device);
  m.def("get_rng_state", &get_rng_state);
  m.def("set_rng_state", &set_rng_state);
  m.def("manual_seed", &manual_seed);
  m.def("initial_seed", &initial_seed);
  m.def("seed", &seed);
  m.def("host_alias(Tensor(a) t) -> Tensor(a)", [](const Tensor& t) { return host(t); });
}

}  // namespace simnpu
