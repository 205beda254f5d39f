"""Module.to / casts on fake parameters while tracing (memplan.compat.fake_module_conversion)."""


def test_module_to_on_fake_parameters_keeps_ties_and_identity():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from memplan.compat import fake_module_conversion

    with fake_module_conversion(), FakeTensorMode():
        emb = torch.nn.Embedding(10, 4)
        head = torch.nn.Linear(4, 10, bias=False)
        head.weight = emb.weight
        model = torch.nn.Sequential(emb, head)
        same = model[1].weight
        model.to("cpu")                                   # nothing changes: the very same parameter
        assert model[1].weight is same
        model.to(torch.bfloat16)
        assert model[0].weight.dtype == torch.bfloat16 and model[0].weight is model[1].weight
