// Copyright (c) 2026, torch_npu API-consistency kit contributors.
// SPDX-License-Identifier: BSD-3-Clause
//
// The simulated NPU's fallback: every op without a kernel of its own, on host aliases of the device memory.
// A part of simnpu.cpp (included there, inside namespace simnpu, after the memory, generators and aliases it
// uses); kept apart so each file stays readable. Not a header of its own: it compiles only in simnpu.cpp.
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
    // A ZeroTensor (forward AD's tangent of a constant) has no memory: the device gets real zeros.
    if (out._is_zerotensor()) out = at::zeros(out.sizes(), out.options());
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

// The device check a real device's kernels make (CUDA's generated wrappers and TensorIterator; torch_npu's
// the same): every tensor argument on one device, except a 0-d CPU tensor, which TensorIterator takes as a
// scalar, and the index tensors of a Tensor?[] list (index, index_put_), which indexing moves to self's
// device. Without it the host kernels would accept a CPU tensor or npu:1 beside npu:0.
bool is_cpu_scalar(const Tensor& t) { return t.is_cpu() && t.dim() == 0; }

void check_one_device(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, size_t first) {
  std::optional<c10::Device> common;
  auto check = [&](const Tensor& t, const c10::Argument& arg) {
    if (!t.defined() || is_cpu_scalar(t)) return;
    if (!common) {
      common = t.device();
      return;
    }
    TORCH_CHECK(*common == t.device(), "Expected all tensors to be on the same device, but found at least two ",
                "devices, ", *common, " and ", t.device(), "! (when checking argument for argument ", arg.name(),
                " in method ", schema.operator_name(), ")");
  };
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::IValue& v = stack[first + i];
    const auto& arg = schema.arguments()[i];
    if (v.isTensor()) check(v.toTensor(), arg);
    if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) check(t, arg);
    }
  }
}

void fallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  size_t nargs = schema.arguments().size(), first = stack->size() - nargs;
  check_one_device(schema, *stack, first);
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

