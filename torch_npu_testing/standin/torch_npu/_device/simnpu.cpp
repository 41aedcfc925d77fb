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

// ---------------------------------------------------------------------------------------- fallback
// Every op without a kernel of its own runs the CPU's kernel on host aliases of its device arguments:
// dense tensors share the device memory; sparse ones are host sparse tensors over aliases of their
// indices and values. A result over an argument's memory becomes a device view of that argument; a new
// result's memory is handed to the device. A mutated argument whose host alias the kernel re-allocated
// (an out= resized) or re-shaped is written back; a sparse one gets the host's new indices and values.
bool is_compressed(c10::Layout layout) {
  return layout == c10::kSparseCsr || layout == c10::kSparseCsc || layout == c10::kSparseBsr ||
         layout == c10::kSparseBsc;
}

struct Call {
  std::vector<std::pair<const c10::StorageImpl*, Tensor>> bases;  // alias storage -> device tensor
  std::vector<std::pair<Tensor, Tensor>> sparse;                  // (host sparse, device sparse)
  std::vector<std::pair<Tensor, Tensor>> written;                 // (host sparse, device sparse) mutated
  bool writing = false;                                           // converting a mutable argument
  std::vector<std::pair<Tensor, Tensor>> dense_args;              // (device, host alias) of dense args
  std::optional<c10::Device> device;
  std::optional<at::Generator> generator;
  c10::DispatchKey key = c10::DispatchKey::CPU;

  Tensor to_host(const Tensor& t) {
    if (!t.defined() || t.device().type() != kNpu) return t;
    if (!device) device = t.device();
    if (t.layout() == c10::kSparse) return sparse_to_host(t);
    if (is_compressed(t.layout())) return compressed_to_host(t);
    if (t.is_nested()) return nested_to_host(t);
    TORCH_CHECK(t.layout() == c10::kStrided, "simulated NPU: layout ", t.layout(), " is not served on the device");
    TORCH_CHECK(t.storage().device().type() == kNpu, "simulated NPU: an npu tensor whose memory is on ",
                t.storage().device(), " (a fake tensor outside its mode?) cannot run on the device");
    Tensor alias = cpu_alias(t);
    bases.emplace_back(alias.storage().unsafeGetStorageImpl(), t);
    dense_args.emplace_back(t, alias);
    return alias;
  }
  // A fake sparse tensor (device npu, members on meta) is served by the meta kernels.
  static bool on_meta(const Tensor& member) { return member.device().type() == c10::kMeta; }
  Tensor sparse_to_host(const Tensor& t) {
    auto* impl = at::sparse::get_sparse_impl(t);
    bool meta = on_meta(impl->values());
    key = meta ? c10::DispatchKey::SparseMeta : c10::DispatchKey::SparseCPU;
    Tensor indices = meta ? impl->indices() : to_host(impl->indices());
    Tensor values = meta ? impl->values() : to_host(impl->values());
    auto host = at::detail::make_tensor<at::SparseTensorImpl>(c10::DispatchKeySet(key), t.dtype());
    auto* hi = at::sparse::get_sparse_impl(host);
    hi->raw_resize_(impl->sparse_dim(), impl->dense_dim(), t.sizes());
    hi->set_indices_and_values_unsafe(indices, values);
    hi->set_coalesced(impl->coalesced());
    remember(host, t);
    return host;
  }
  void remember(const Tensor& host, const Tensor& t) {
    sparse.emplace_back(host, t);
    if (writing) written.emplace_back(host, t);
  }
  Tensor compressed_to_host(const Tensor& t) {
    auto* impl = at::sparse_csr::get_sparse_csr_impl(t);
    bool meta = on_meta(impl->values());
    key = meta ? c10::DispatchKey::SparseCsrMeta : c10::DispatchKey::SparseCsrCPU;
    auto member = [&](const Tensor& m) { return meta ? m : to_host(m); };
    Tensor compressed = member(impl->compressed_indices()), plain = member(impl->plain_indices());
    Tensor values = member(impl->values());
    auto host = at::detail::make_tensor<at::SparseCsrTensorImpl>(
        c10::DispatchKeySet(key), c10::Device(meta ? c10::kMeta : c10::kCPU), t.layout(), t.dtype());
    at::sparse_csr::get_sparse_csr_impl(host)->set_member_tensors(compressed, plain, values, t.sizes());
    remember(host, t);
    return host;
  }
  // A nested (strided) tensor: a host nested tensor over an alias of its whole buffer, same metadata.
  Tensor nested_to_host(const Tensor& t) {
    key = c10::DispatchKey::NestedTensorCPU;
    auto* impl = at::native::get_nested_tensor_impl(t);
    Tensor buffer = to_host(impl->get_unsafe_storage_as_tensor());
    auto host = at::detail::make_tensor<at::native::NestedTensorImpl>(buffer, impl->get_nested_sizes(),
                                                              impl->get_nested_strides(), impl->get_storage_offsets());
    remember(host, t);
    return host;
  }
  Tensor nested_to_device(const Tensor& out) {
    auto* impl = at::native::get_nested_tensor_impl(out);
    Tensor buffer = to_device(impl->get_unsafe_storage_as_tensor());
    return at::detail::make_tensor<at::native::NestedTensorImpl>(buffer, impl->get_nested_sizes(), impl->get_nested_strides(),
                                                         impl->get_storage_offsets());
  }
  std::optional<Tensor> host_optional(const c10::IValue& item) {
    return item.isNone() ? std::optional<Tensor>() : std::optional<Tensor>(to_host(item.toTensor()));
  }
  c10::IValue to_host(const c10::IValue& v) {
    if (v.isTensor()) return to_host(v.toTensor());
    if (v.isTensorList()) {
      c10::List<Tensor> out;
      for (const Tensor& t : v.toTensorList()) out.push_back(to_host(t));
      return out;
    }
    if (v.isList()) {
      bool tensors = false;
      for (const auto& item : v.toListRef()) tensors = tensors || item.isTensor();
      if (tensors) {  // Tensor?[]
        c10::List<std::optional<Tensor>> out;
        for (const auto& item : v.toListRef()) out.push_back(host_optional(item));
        return out;
      }
    }
    if (v.isDevice() && v.toDevice().type() == kNpu) {
      if (!device) device = c10::Device(kNpu, v.toDevice().has_index() ? v.toDevice().index() : current);
      return c10::Device(c10::kCPU);
    }
    if (v.isGenerator() && v.toGenerator().device().type() == kNpu) {
      generator = v.toGenerator();
      return c10::IValue();
    }
    if (v.isGenerator()) {
      TORCH_CHECK(false, "Expected a 'npu' device type for generator but found '", v.toGenerator().device().type(),
                  "'");
    }
    return v;
  }
  c10::Device target() const { return device.value_or(c10::Device(kNpu, current)); }

  Tensor to_device(Tensor out) {
    if (!out.defined() || !out.is_cpu()) return out;
    for (const auto& arg : sparse) {
      if (arg.first.unsafeGetTensorImpl() == out.unsafeGetTensorImpl()) return arg.second;
    }
    if (out.layout() == c10::kSparse) return sparse_to_device(out);
    if (is_compressed(out.layout())) return compressed_to_device(out);
    if (out.is_nested()) return nested_to_device(out);
    if (out.layout() == c10::kStrided) {
      for (const auto& base : bases) {
        if (base.first == out.storage().unsafeGetStorageImpl()) return view_over(base.second, out);
      }
    }
    return adopt(std::move(out), target());
  }
  Tensor sparse_to_device(const Tensor& out) {
    auto* oi = at::sparse::get_sparse_impl(out);
    Tensor indices = to_device(oi->indices()), values = to_device(oi->values());
    c10::DeviceGuard guard(target());
    auto result = at::detail::make_tensor<at::SparseTensorImpl>(
        c10::DispatchKeySet(c10::DispatchKey::SparsePrivateUse1), out.dtype());
    auto* ri = at::sparse::get_sparse_impl(result);
    ri->raw_resize_(oi->sparse_dim(), oi->dense_dim(), out.sizes());
    ri->set_indices_and_values_unsafe(indices, values);
    ri->set_coalesced(oi->coalesced());
    return result;
  }
  Tensor compressed_to_device(const Tensor& out) {
    auto* oi = at::sparse_csr::get_sparse_csr_impl(out);
    Tensor compressed = to_device(oi->compressed_indices()), plain = to_device(oi->plain_indices());
    Tensor values = to_device(oi->values());
    auto result = at::detail::make_tensor<at::SparseCsrTensorImpl>(
        c10::DispatchKeySet(c10::DispatchKey::SparseCsrPrivateUse1), target(), out.layout(), out.dtype());
    at::sparse_csr::get_sparse_csr_impl(result)->set_member_tensors(compressed, plain, values, out.sizes());
    return result;
  }
  c10::IValue to_device(c10::IValue v) {
    if (v.isTensor()) return to_device(std::move(v).toTensor());
    if (v.isTensorList()) {
      c10::List<Tensor> out;
      for (const Tensor& t : v.toTensorList()) out.push_back(to_device(t));
      return out;
    }
    return v;
  }

  // After the kernel: mutated arguments whose host side moved or changed shape get it back.
  void write_back() {
    for (const auto& arg : dense_args) write_back_dense(arg.first, arg.second);
    for (const auto& arg : written) {
      if (!arg.first.is_nested()) write_back_sparse(arg.second, arg.first);
    }
  }
  static void write_back_dense(const Tensor& dev, const Tensor& host) {
    bool same_memory = host.storage().data() == dev.storage().data();
    if (same_memory && host.sizes().equals(dev.sizes()) && host.strides().equals(dev.strides()) &&
        host.storage_offset() == dev.storage_offset()) {
      return;
    }
    if (!same_memory) {
      size_t nbytes = host.storage().nbytes();
      if (dev.storage().nbytes() < nbytes) at::native::resize_bytes_cpu(dev.storage().unsafeGetStorageImpl(), nbytes);
      if (nbytes) std::memcpy(dev.storage().mutable_data(), host.storage().data(), nbytes);
    }
    dev.unsafeGetTensorImpl()->set_sizes_and_strides(host.sizes(), host.strides(), host.storage_offset());
  }
  void write_back_sparse(const Tensor& dev, const Tensor& host) {
    if (host.layout() == c10::kSparse) {
      auto *hi = at::sparse::get_sparse_impl(host), *di = at::sparse::get_sparse_impl(dev);
      Tensor indices = to_device(hi->indices()), values = to_device(hi->values());
      di->raw_resize_(hi->sparse_dim(), hi->dense_dim(), host.sizes());
      di->set_indices_and_values_unsafe(indices, values);
      di->set_coalesced(hi->coalesced());
      return;
    }
    auto* hi = at::sparse_csr::get_sparse_csr_impl(host);
    Tensor compressed = to_device(hi->compressed_indices()), plain = to_device(hi->plain_indices());
    at::sparse_csr::get_sparse_csr_impl(dev)->set_member_tensors(compressed, plain, to_device(hi->values()),
                                                                 host.sizes());
  }
};

bool has_generator(const c10::FunctionSchema& schema) {
  for (const auto& arg : schema.arguments()) {
    if (arg.type()->kind() == c10::TypeKind::OptionalType &&
        arg.type()->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType) {
      return true;
    }
  }
  return false;
}

bool draws_random(const c10::OperatorHandle& op) {
  const auto& name = op.schema().name();
  return has_generator(op.schema()) || name == "aten::native_dropout" || name == "aten::rrelu_with_noise" ||
         name == "aten::_fused_dropout" || name == "aten::randperm";
}

void fallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  size_t nargs = schema.arguments().size(), first = stack->size() - nargs;
  std::vector<c10::IValue> originals(stack->begin() + first, stack->end());
  Call call;
  if (keys.has(c10::DispatchKey::Sparse)) call.key = c10::DispatchKey::SparseCPU;     // also a factory of one
  if (keys.has(c10::DispatchKey::SparseCsr)) call.key = c10::DispatchKey::SparseCsrCPU;
  if (keys.has(c10::DispatchKey::NestedTensor)) call.key = c10::DispatchKey::NestedTensorCPU;
  for (size_t i = first; i < stack->size(); ++i) {
    const auto* info = schema.arguments()[i - first].alias_info();
    call.writing = info && info->isWrite();
    (*stack)[i] = call.to_host((*stack)[i]);
  }
  call.writing = false;
  std::optional<SwapRng> swap;
  if (call.generator) {
    swap.emplace(*call.generator);
  } else if (draws_random(op)) {
    swap.emplace(default_generator(call.device ? call.device->index() : current));
  }
  op.redispatchBoxed(c10::DispatchKeySet(call.key), stack);
  swap.reset();
  call.write_back();
  size_t nrets = schema.returns().size(), ret0 = stack->size() - nrets;
  for (size_t i = 0; i < nrets; ++i) {
    const auto* info = schema.returns()[i].alias_info();
    if (info && info->isWrite()) {  // an in-place or out= result is the argument itself
      for (size_t j = 0; j < nargs; ++j) {
        const auto* arg = schema.arguments()[j].alias_info();
        if (arg && arg->isWrite() && arg->beforeSets() == info->beforeSets()) (*stack)[ret0 + i] = originals[j];
      }
      if ((*stack)[ret0 + i].isTensor() && !(*stack)[ret0 + i].toTensor().is_cpu()) continue;
    }
    (*stack)[ret0 + i] = call.to_device(std::move((*stack)[ret0 + i]));
  }
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>()); }
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>()); }
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}
TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// A sparse op with a CompositeExplicitAutograd default (is_coalesced, values, crow_indices, ...) would take
// that default on the device instead of the fallback: each op the CPU serves for a sparse layout gets the
// fallback as its device kernel for that layout.
int register_sparse_kernels() {
  static std::vector<std::unique_ptr<torch::Library>> libraries;
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<std::pair<c10::DispatchKey, c10::DispatchKey>> keys = {
      {c10::DispatchKey::SparseCPU, c10::DispatchKey::SparsePrivateUse1},
      {c10::DispatchKey::SparseCsrCPU, c10::DispatchKey::SparseCsrPrivateUse1},
      {c10::DispatchKey::NestedTensorCPU, c10::DispatchKey::NestedTensorPrivateUse1}};
  for (const auto& key : keys) {
    libraries.push_back(std::make_unique<torch::Library>(torch::Library::IMPL, "aten", key.second, __FILE__,
                                                         __LINE__));
    for (const auto& name : dispatcher.getAllOpNames()) {
      auto op = dispatcher.findOp(name);
      if (!op || name.name.rfind("aten::", 0) != 0 || !op->hasKernelForDispatchKey(key.first) ||
          op->hasKernelForDispatchKey(key.second)) {
        continue;
      }
      std::string full = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
      libraries.back()->impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&fallback>());
    }
  }
  return 0;
}
static int sparse_kernels_registered = register_sparse_kernels();

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage", TORCH_FN(at::native::set_));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_cpu_));
  m.impl("set_.source_Tensor", TORCH_FN(at::native::set_tensor_));
  m.impl("set_", TORCH_FN(set_empty));
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
}

// A conjugate or negative view copied across the boundary keeps its bit: copy_from reads it through the
// alias. Without these, the conj/neg fallback materialises the view with clone, whose copy_ comes back here.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

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
