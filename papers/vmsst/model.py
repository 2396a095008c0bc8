"""VMSST: Variational Multilingual Source-Separation Transformer (Wieting et al., ACL 2023, sections 3-5) and
the baselines of section 6.3 trained in the same harness.

Inference networks (section 5, "Encoder Architecture"): a semantic encoder and a language encoder that share
only the embedding table (the decoder uses it too); each mean-pools its hidden states and two linear maps give
the mean and log-variance of its Gaussian variable. The language encoder adds a language embedding to its
input (one encoder stands for the N language inference networks). The sentence embedding for every
evaluation is the mean of the semantic variable.

Objective (section 4), for a batch of pairs (x_i, x_j), minimised:

    L = -log p(x_i | mu_sem(x_j)) - log p(x_j | mu_sem(x_i)) - lambda * ELBO,
    ELBO = log p(x_i | z_sem, z_li) + log p(x_j | z_sem, z_lj)
           - beta_t * [KL(q(z_sem) || N(0, I)) + KL(q(z_li) || N(0, I)) + KL(q(z_lj) || N(0, I))]

with z ~ q drawn by the reparameterisation trick, q(z_sem | .) reading x_i for even and x_j for odd examples
of the batch ("we alternate which of the two parallel sentences is fed into the semantic encoder within a
batch"), and beta_t = min(1, t / anneal_steps) (section 6.4: "anneal the KL term so that it increased linearly
for 1,000,000 updates"). Log-likelihoods are summed over a sentence's tokens and KL over its dimensions, then
averaged over the batch (BGT's criterion does the same).

Where the paper is silent (written down): the translation terms condition the shared decoder on the semantic
mean and the language variable at its prior mean, [mu_sem(x_j); 0] -- BGT used a separate translation decoder
on mu_sem alone, which a single decoder for both terms cannot; the latent size equals the hidden size (so the
output projection is 3d x V as section 7.1 states); the decoder shares the encoders' embedding table.

How the step is computed (the same loss; for speed, tested against the plain computation): the semantic
encoder embeds both sides of the batch in one call, and so does a single language encoder (``joint_sides``;
:mod:`common.models.joint`); the four decoder terms run as one decoder pass whose vocabulary loss is the fused
linear + cross-entropy with each sentence's weight in the objective given at the forward pass (``vocab_loss``;
:meth:`papers.vmsst.decoder.LatentOutput.weighted_nll`), over the real target tokens the collator lists; the KL
weight reads the step from a buffer. With one shared decoder and at most one language encoder (the paper's
models), the step has no host-device sync. The routed ablations (several language encoders: Table 4 "4 enc.", per
language; per-language decoders: Table 6 "full dec.") select each encoder's / decoder's rows by language, a
data-dependent size: there a sync stays (removing it would run every encoder on every row).

Baselines (section 6.3): ``contrastive`` -- the symmetric in-batch loss on the semantic means,
-1/(2|B|) sum_i [log p(s_i | t_i) + log p(t_i | s_i)] with p(s_i | t_i) = exp(s_i . t_i) / sum_j exp(s_i . t_j)
(dot products as written, negatives gathered across ranks); ``bitranslation`` -- the translation terms alone;
``vmsst_contrastive`` -- contrastive + lambda * the VMSST loss.
"""
from __future__ import annotations

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel

from common.distributed.collectives import gather_with_grad, rank
from common.losses.linear_cross_entropy import IMPLEMENTATIONS
from common.models.joint import encode_sides
from papers.vmsst.decoder import LatentDecoder, T5LatentDecoder
from papers.vmsst.settings import HEAD_INITS, OBJECTIVES, Settings


class InferenceNetwork(nn.Module):
    """An encoder with Gaussian heads: mean-pooled hidden states -> (mean (B, k), log-variance (B, k)).

    ``identity_mean``: the mean head starts as the identity (k = d), so that before the first update the mean is the
    pooled backbone itself: from a pretrained encoder, the sentence space it starts from (the paper does not say how
    its heads start; ``Settings.head_init``)."""

    rowwise_forward = True  # each row is encoded alone: the trainer may chunk it (common/training/grad_cache.py)

    def __init__(self, backbone: PreTrainedModel, latent: int, num_languages: int = 0, identity_mean: bool = False):
        super().__init__()
        self.backbone = backbone
        d = backbone.config.hidden_size
        self.mean = nn.Linear(d, latent, bias=False)
        self.logv = nn.Linear(d, latent, bias=False)
        if identity_mean:
            if latent != d:
                raise ValueError(f"an identity mean head needs the latent size ({latent}) to be the hidden size ({d})")
            nn.init.eye_(self.mean.weight)
        self.languages = nn.Embedding(num_languages, d) if num_languages else None
        if self.languages is not None:
            nn.init.normal_(self.languages.weight, std=0.02)

    def pooled(self, ids: torch.Tensor, mask: torch.Tensor, lang: torch.Tensor | None = None) -> torch.Tensor:
        embeds = self.backbone.get_input_embeddings()(ids)  # (B, S, d)
        if self.languages is not None and lang is not None:
            embeds = embeds + self.languages(lang)[:, None, :]
        h = self.backbone(inputs_embeds=embeds, attention_mask=mask).last_hidden_state  # (B, S, d)
        m = mask[..., None].to(h.dtype)
        return (h * m).sum(1) / m.sum(1).clamp(min=1.0)  # (B, d)

    def forward(self, ids, mask, lang=None) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.pooled(ids, mask, lang)
        return self.mean(p), self.logv(p)


def kl_standard_normal(mean: torch.Tensor, logv: torch.Tensor) -> torch.Tensor:
    """KL(N(mean, exp(logv)) || N(0, I)) summed over dimensions, in fp32 under autocast: (B,)."""
    mean, logv = mean.float(), logv.float()
    return -0.5 * (1 + logv - mean.pow(2) - logv.exp()).sum(-1)


def share_word_embeddings(*backbones: PreTrainedModel) -> nn.Embedding:
    table = backbones[0].get_input_embeddings()
    for b in backbones[1:]:
        b.set_input_embeddings(table)
    return table


class VMSST(nn.Module):
    def __init__(self, semantic: PreTrainedModel, settings: Settings, num_languages: int, max_length: int,
                 decoder_heads: int, decoder_ffn: int, dropout: float = 0.0, seed: int = 1,
                 pretrained_decoder: tuple[nn.Module, nn.Linear] | None = None, joint_sides: bool = True):
        """``pretrained_decoder``: a T5 / mT5 checkpoint's (decoder stack, lm_head) to build the decoder(s) from
        (:class:`T5LatentDecoder`); otherwise a from-scratch :class:`LatentDecoder` of ``decoder_layers``.
        ``joint_sides`` False: each side through its own encoder call (the benchmark's reference)."""
        super().__init__()
        if settings.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {settings.objective!r}; expected one of {OBJECTIVES}")
        if settings.vocab_loss not in IMPLEMENTATIONS:
            raise ValueError(f"vocab_loss must be one of {IMPLEMENTATIONS}, got {settings.vocab_loss!r}")
        if settings.head_init not in HEAD_INITS:
            raise ValueError(f"head_init must be one of {HEAD_INITS}, got {settings.head_init!r}")
        identity = settings.head_init == "identity"
        self.joint_sides = joint_sides
        self.s, self.num_languages = settings, num_languages
        d = semantic.config.hidden_size
        self.semantic = InferenceNetwork(semantic, d, identity_mean=identity)
        lang_emb = num_languages if settings.encoder_language_embeddings else 0
        needs_generator = settings.objective != "contrastive"
        self.language_encoders = nn.ModuleList()
        self.encoder_of = list(range(num_languages))  # language id -> language encoder index
        if settings.objective in ("vmsst", "vmsst_contrastive"):
            if settings.encoders == "one":  # Table 4 "1 enc.": the semantic encoder's backbone for both variables
                self.language_encoders.append(InferenceNetwork(semantic, d, lang_emb, identity_mean=identity))
                self.encoder_of = [0] * num_languages
            else:
                count = {"twin": 1, "per_language": num_languages}.get(settings.encoders)
                count = count or int(settings.encoders[1:])
                for _ in range(count):
                    self.language_encoders.append(InferenceNetwork(copy.deepcopy(semantic), d, lang_emb,
                                                                    identity_mean=identity))
                if settings.encoders == "per_language":
                    self.encoder_of = list(range(num_languages))
                elif count == 1:
                    self.encoder_of = [0] * num_languages
                else:  # section 7.1: "We allocate the languages randomly to the different encoders"; a seeded
                    # shuffle dealt round-robin, so every encoder gets languages (the paper does not say; an empty
                    # encoder would make "4 enc." a twin model)
                    order = list(range(num_languages))
                    random.Random(seed).shuffle(order)
                    self.encoder_of = [0] * num_languages
                    for position, language in enumerate(order):
                        self.encoder_of[language] = position % count
            share_word_embeddings(semantic, *(e.backbone for e in self.language_encoders))
        self.decoders = nn.ModuleList()
        if needs_generator:
            n_dec = num_languages if settings.decoders == "per_language" else 1
            table = semantic.get_input_embeddings()
            for _ in range(n_dec):
                if pretrained_decoder is not None:
                    stack, lm_head = pretrained_decoder
                    self.decoders.append(T5LatentDecoder(
                        copy.deepcopy(stack), lm_head, table, num_languages, 2 * d, settings.decoder_layers,
                        settings.decoder_language_embeddings, settings.factored))
                else:
                    self.decoders.append(LatentDecoder(
                        table, num_languages, settings.decoder_layers, decoder_heads, decoder_ffn, 2 * d, max_length,
                        dropout, settings.decoder_language_embeddings, settings.factored))
        for dec in self.decoders:
            dec.compile_loss = settings.compile_loss
            dec.loss_chunk = settings.loss_chunk_tokens
            dec.vocab_loss = settings.vocab_loss
        # the step, set by the trainer before every step (on_step): the KL annealing schedule. A buffer, not a Python
        # int, so that a compiled step reads it as data (an attribute would be a guard: one recompilation a step);
        # not saved (the trainer sets it on resume)
        self.register_buffer("step", torch.zeros((), dtype=torch.long), persistent=False)

    def on_step(self, step: int) -> None:
        self.step.fill_(step)

    def kl_weight(self) -> torch.Tensor:
        """beta_t = min(1, t / anneal_steps), 0 without the KL term: a 0-dim fp32 tensor."""
        if not self.s.kl:
            return torch.zeros((), device=self.step.device)
        return (self.step.float() / self.s.anneal_steps).clamp(max=1.0)

    # ------------------------------------------------------------------ pieces
    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The sentence embedding: the mean of the semantic variable, (B, d)."""
        return self.semantic(ids, mask)[0]

    def decode_nll(self, targets, target_mask, lang, z_sem, z_lang) -> torch.Tensor:
        """-log p(x | z_sem, z_lang) per sentence, (B,), with its gradient, with the decoder of each sentence's
        language."""
        if len(self.decoders) == 1:
            return self.decoders[0].nll(targets, target_mask, lang, z_sem, z_lang)
        out = torch.zeros(targets.shape[0], device=targets.device)
        for li in lang.unique().tolist():  # routed (per-language decoders): a host sync
            sel = lang == li
            out[sel] = self.decoders[li].nll(targets[sel], target_mask[sel], lang[sel], z_sem[sel], z_lang[sel])
        return out

    def decode_weighted(self, targets, target_mask, lang, z_sem, z_lang, row_weights, positions=None,
                        labels=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(sum over sentences of row_weights x -log p(x | z_sem, z_lang), with gradient; the per-sentence NLLs (B,)
        without gradient): :meth:`~papers.vmsst.decoder.LatentOutput.weighted_nll` with the decoder of each
        sentence's language."""
        if len(self.decoders) == 1:
            return self.decoders[0].weighted_nll(targets, target_mask, lang, z_sem, z_lang, row_weights, positions,
                                                 labels)
        B, T = targets.shape
        total = z_sem.new_zeros((), dtype=torch.float32)
        per_sentence = torch.zeros(B, device=targets.device)
        for li in lang.unique().tolist():  # routed (per-language decoders): host syncs
            sel = lang == li
            mine = local = None
            if positions is not None:
                mine = sel[positions // T]  # (M,) the scored tokens of this language's sentences
                local = (torch.cumsum(sel, 0) - 1)[positions[mine] // T] * T + positions[mine] % T
            loss, nll = self.decoders[li].weighted_nll(
                targets[sel], target_mask[sel], lang[sel], z_sem[sel], z_lang[sel], row_weights[sel], local,
                labels[mine] if mine is not None else None)
            total = total + loss
            per_sentence[sel] = nll
        return total, per_sentence

    def decode_many(self, *requests: tuple, weights: tuple[float, ...]) -> tuple[torch.Tensor, tuple]:
        """Several decoder terms as one batch (one decoder pass instead of several small ones): each request is
        (targets, target_mask, lang, z_sem, z_lang, scored positions or None, their labels or None), ``weights`` each
        request's weight per sentence in the objective. Returns (sum of weights x NLLs, with gradient; each
        request's (B_r,) NLLs without gradient)."""
        T = max(r[0].shape[1] for r in requests)
        rows = [r[0].shape[0] for r in requests]
        targets = torch.cat([F.pad(r[0], (0, T - r[0].shape[1])) for r in requests])  # (R*B, T)
        mask = torch.cat([F.pad(r[1], (0, T - r[1].shape[1])) for r in requests])
        lang, z_sem, z_lang = (torch.cat([r[k] for r in requests]) for k in (2, 3, 4))
        row_weights = torch.cat([torch.full((n,), w, device=targets.device) for n, w in zip(rows, weights)])
        positions = labels = None
        if all(r[5] is not None for r in requests):  # the collator's lists, moved to rows of the joint batch
            offsets = [sum(rows[:k]) for k in range(len(rows))]
            positions = torch.cat([(off + r[5] // r[0].shape[1]) * T + r[5] % r[0].shape[1]
                                   for off, r in zip(offsets, requests)])  # (M,) flat into (R*B, T)
            labels = torch.cat([r[6] for r in requests])
        total, nll = self.decode_weighted(targets, mask, lang, z_sem, z_lang, row_weights, positions, labels)
        return total, nll.split(rows)

    def language_variable(self, ids, mask, lang) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.language_encoders) == 1:
            return self.language_encoders[0](ids, mask, lang)
        enc = torch.tensor(self.encoder_of, device=lang.device)[lang]  # (B,) encoder index per sentence
        d = self.semantic.mean.out_features
        mean = torch.zeros(ids.shape[0], d, device=ids.device)
        logv = torch.zeros_like(mean)
        for e in enc.unique().tolist():  # routed (several language encoders): a host sync
            sel = enc == e
            m, lv = self.language_encoders[e](ids[sel], mask[sel], lang[sel])  # bf16 under autocast
            mean[sel], logv[sel] = m.to(mean.dtype), lv.to(logv.dtype)
        return mean, logv

    # ------------------------------------------------------------------ losses
    def contrastive(self, s: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Section 6.3's symmetric in-batch loss on dot products, negatives from the global batch."""
        offset = rank() * s.shape[0]
        labels = torch.arange(s.shape[0], device=s.device) + offset
        st = s @ gather_with_grad(t).T  # (B, W*B): p(s_i | t_i) over the targets
        ts = t @ gather_with_grad(s).T
        return (F.cross_entropy(st.float(), labels) + F.cross_entropy(ts.float(), labels)) / 2

    def _request(self, b: dict, side: str, z_sem: torch.Tensor, z_lang: torch.Tensor) -> tuple:
        """A decoder term of :meth:`decode_many` for side "i" or "j"."""
        return (b[f"{side}_targets"], b[f"{side}_target_mask"], b[f"{side}_lang"], z_sem, z_lang,
                b.get(f"{side}_target_positions"), b.get(f"{side}_target_labels"))

    def _sides(self, encoder: nn.Module, b: dict, lang: bool) -> list:
        """``encoder`` over sides i and j: one call of both (``joint_sides``) or two."""
        sides = [(b[f"{s}_ids"], b[f"{s}_mask"], *((b[f"{s}_lang"],) if lang else ())) for s in ("i", "j")]
        if self.joint_sides:
            return encode_sides(encoder, sides, self.semantic.backbone.config.pad_token_id or 0)
        return [encoder(*side) for side in sides]

    def vmsst_terms(self, b: dict, mu_i: torch.Tensor, logv_i: torch.Tensor, mu_j: torch.Tensor,
                    logv_j: torch.Tensor) -> dict[str, torch.Tensor]:
        """The VMSST (or BiTranslation) loss terms. The decoder terms come from one weighted pass: ``loss_vmsst``
        (``loss_translation`` for BiTranslation) carries the gradient; the logged ``loss_translation`` and
        ``loss_reconstruction`` of VMSST are their values."""
        out = {}
        zeros = torch.zeros_like(mu_i)
        B = mu_i.shape[0]
        # translation terms: p(x_i | mu_sem(x_j)) + p(x_j | mu_sem(x_i))
        translation = (self._request(b, "i", mu_j, zeros), self._request(b, "j", mu_i, zeros))
        if self.s.objective == "bitranslation":
            out["loss_translation"], _ = self.decode_many(*translation, weights=(1 / B, 1 / B))  # mean over pairs
            return out
        # ELBO: z_sem from one side of each pair, alternating within the batch (even: x_i, odd: x_j)
        even = (torch.arange(mu_i.shape[0], device=mu_i.device) % 2 == 0)[:, None]
        sem_mean, sem_logv = torch.where(even, mu_i, mu_j), torch.where(even, logv_i, logv_j)
        z_sem = sem_mean + torch.randn_like(sem_mean) * (0.5 * sem_logv).exp()
        if len(self.language_encoders) == 1:
            (li_mean, li_logv), (lj_mean, lj_logv) = self._sides(self.language_encoders[0], b, lang=True)
        else:
            li_mean, li_logv = self.language_variable(b["i_ids"], b["i_mask"], b["i_lang"])
            lj_mean, lj_logv = self.language_variable(b["j_ids"], b["j_mask"], b["j_lang"])
        z_li = li_mean + torch.randn_like(li_mean) * (0.5 * li_logv).exp()
        z_lj = lj_mean + torch.randn_like(lj_mean) * (0.5 * lj_logv).exp()
        lam = self.s.elbo_weight
        decoded, (nll_i, nll_j, rec_i, rec_j) = self.decode_many(
            *translation, self._request(b, "i", z_sem, z_li), self._request(b, "j", z_sem, z_lj),
            weights=(1 / B, 1 / B, lam / B, lam / B))  # = mean(nll_i + nll_j) + lambda * mean(rec_i + rec_j)
        out["loss_translation"] = (nll_i + nll_j).mean()
        out["loss_reconstruction"] = (rec_i + rec_j).mean()
        kl = (kl_standard_normal(sem_mean, sem_logv) + kl_standard_normal(li_mean, li_logv)
              + kl_standard_normal(lj_mean, lj_logv)).mean()
        beta = self.kl_weight()
        out["loss_kl"], out["kl_weight"] = kl, beta
        out["loss_vmsst"] = decoded + lam * beta * kl  # translation + lambda * (reconstruction + beta * KL)
        return out

    @property
    def batch_decomposable(self) -> bool:
        """Whether the loss is a mean of per-pair terms, so micro-batches with accumulated gradients optimize the
        same thing (the trainer's ``micro_batch_per_gpu``): BiTranslation and VMSST; not the in-batch contrastive
        objectives, whose negatives are the batch. (The ELBO's alternating source side is by position: micro-batches
        of even size keep it.)"""
        return self.s.objective in ("bitranslation", "vmsst")

    def forward(self, i_ids, i_mask, j_ids, j_mask, **b) -> dict:
        b = {**b, "i_ids": i_ids, "i_mask": i_mask, "j_ids": j_ids, "j_mask": j_mask}
        (mu_i, logv_i), (mu_j, logv_j) = self._sides(self.semantic, b, lang=False)  # (B, k) each
        out: dict[str, torch.Tensor] = {}
        if self.s.objective in ("contrastive", "vmsst_contrastive"):
            out["loss_contrastive"] = self.contrastive(mu_i, mu_j)
        if self.s.objective != "contrastive":
            out.update(self.vmsst_terms(b, mu_i, logv_i, mu_j, logv_j))
        if self.s.objective == "contrastive":
            out["loss"] = out["loss_contrastive"]
        elif self.s.objective == "bitranslation":
            out["loss"] = out["loss_translation"]
        elif self.s.objective == "vmsst":
            out["loss"] = out["loss_vmsst"]
        else:  # VMSST Contrastive: the contrastive loss plus lambda times the VMSST loss
            out["loss"] = out["loss_contrastive"] + self.s.vmsst_weight * out["loss_vmsst"]
        return out
