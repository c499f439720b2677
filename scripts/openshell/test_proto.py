"""Lens's `.proto` files against the descriptors in NVIDIA's wheel: every message, field,
enum value and method Lens declares is the wheel's, with the same name, number, type,
label, oneof and streaming. Lens's files are compiled by Google's protoc (grpcio-tools),
not by Lens's own build, so the check does not lean on Lens's compiler either."""

from __future__ import annotations

import importlib.resources

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc
from openshell._proto import datamodel_pb2, openshell_pb2, sandbox_pb2

from conftest import ROOT

PROTO_DIR = ROOT / "crates/lens-openshell/proto"
FILES = ["datamodel.proto", "sandbox.proto", "openshell.proto"]


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    out = tmp_path_factory.mktemp("descriptors") / "lens.pb"
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    code = protoc.main(
        ["protoc", f"-I{PROTO_DIR}", f"-I{well_known}", f"--descriptor_set_out={out}", *FILES]
    )
    assert code == 0, "protoc compiles Lens's .proto files"
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def nvidia():
    files = {}
    for module in (datamodel_pb2, sandbox_pb2, openshell_pb2):
        proto = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        files[proto.package] = proto
    return files


def by_name(items):
    return {item.name: item for item in items}


def field_shape(message, field):
    oneof = message.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else None
    return (field.number, field.type, field.label, field.type_name, oneof, field.proto3_optional)


def compare_message(ours, theirs, path, problems):
    their_fields = by_name(theirs.field)
    for field in ours.field:
        where = f"{path}.{field.name}"
        if field.name not in their_fields:
            problems.append(f"{where}: not in the wheel")
        elif field_shape(ours, field) != field_shape(theirs, their_fields[field.name]):
            problems.append(
                f"{where}: Lens {field_shape(ours, field)} vs wheel {field_shape(theirs, their_fields[field.name])}"
            )
    their_nested = by_name(theirs.nested_type)
    for nested in ours.nested_type:
        if nested.options.map_entry:
            continue  # a map field's entry is compared through the field's own type
        if nested.name not in their_nested:
            problems.append(f"{path}.{nested.name}: not in the wheel")
        else:
            compare_message(nested, their_nested[nested.name], f"{path}.{nested.name}", problems)
    compare_enums(ours.enum_type, theirs.enum_type, path, problems)


def compare_enums(ours, theirs, path, problems):
    their_enums = by_name(theirs)
    for enum in ours:
        where = f"{path}.{enum.name}"
        if enum.name not in their_enums:
            problems.append(f"{where}: not in the wheel")
            continue
        their_values = {v.name: v.number for v in their_enums[enum.name].value}
        for value in enum.value:
            if their_values.get(value.name) != value.number:
                problems.append(f"{where}.{value.name} = {value.number}: wheel has {their_values.get(value.name)}")


@pytest.mark.parametrize("name", FILES)
def test_every_declaration_is_the_wheels(lens, name):
    ours = next(f for f in lens.file if f.name == name)
    theirs = nvidia()[ours.package]
    problems = []
    their_messages = by_name(theirs.message_type)
    for message in ours.message_type:
        if message.name not in their_messages:
            problems.append(f"{ours.package}.{message.name}: not in the wheel")
        else:
            compare_message(message, their_messages[message.name], f"{ours.package}.{message.name}", problems)
    compare_enums(ours.enum_type, theirs.enum_type, ours.package, problems)
    their_services = by_name(theirs.service)
    for service in ours.service:
        methods = by_name(their_services[service.name].method)
        for method in service.method:
            theirs_m = methods.get(method.name)
            shape = lambda m: (m.input_type, m.output_type, m.client_streaming, m.server_streaming)  # noqa: E731
            if theirs_m is None or shape(method) != shape(theirs_m):
                problems.append(f"{service.name}.{method.name}: Lens {shape(method)} vs wheel {theirs_m and shape(theirs_m)}")
    assert not problems, "\n".join(problems)
    assert ours.message_type or ours.enum_type, "something was compared"


def test_the_comparison_catches_a_changed_number(lens):
    # The check itself can fail: one field number moved is reported.
    ours = next(f for f in lens.file if f.name == "openshell.proto")
    changed = descriptor_pb2.FileDescriptorProto()
    changed.CopyFrom(ours)
    message = next(m for m in changed.message_type if m.name == "ExecSandboxRequest")
    next(f for f in message.field if f.name == "stdin").number = 5
    problems = []
    theirs = by_name(nvidia()[changed.package].message_type)
    compare_message(message, theirs["ExecSandboxRequest"], "ExecSandboxRequest", problems)
    assert any("stdin" in p for p in problems), problems
