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
from papers.vmsst.decoder import LatentDecoder, T5LatentDecoder
from papers.vmsst.settings import OBJECTIVES, Settings


class InferenceNetwork(nn.Module):
    """An encoder with Gaussian heads: mean-pooled hidden states -> (mean (B, k), log-variance (B, k))."""

    rowwise_forward = True  # each row is encoded alone: the trainer may chunk it (common/training/grad_cache.py)

    def __init__(self, backbone: PreTrainedModel, latent: int, num_languages: int = 0):
        super().__init__()
        self.backbone = backbone
        d = backbone.config.hidden_size
        self.mean = nn.Linear(d, latent, bias=False)
        self.logv = nn.Linear(d, latent, bias=False)
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
                 pretrained_decoder: tuple[nn.Module, nn.Linear] | None = None):
        """``pretrained_decoder``: a T5 / mT5 checkpoint's (decoder stack, lm_head) to build the decoder(s) from
        (:class:`T5LatentDecoder`); otherwise a from-scratch :class:`LatentDecoder` of ``decoder_layers``."""
        super().__init__()
        if settings.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {settings.objective!r}; expected one of {OBJECTIVES}")
        self.s, self.num_languages = settings, num_languages
        d = semantic.config.hidden_size
        self.semantic = InferenceNetwork(semantic, d)
        lang_emb = num_languages if settings.encoder_language_embeddings else 0
        needs_generator = settings.objective != "contrastive"
        self.language_encoders = nn.ModuleList()
        self.encoder_of = list(range(num_languages))  # language id -> language encoder index
        if settings.objective in ("vmsst", "vmsst_contrastive"):
            if settings.encoders == "one":  # Table 4 "1 enc.": the semantic encoder's backbone for both variables
                self.language_encoders.append(InferenceNetwork(semantic, d, lang_emb))
                self.encoder_of = [0] * num_languages
            else:
                count = {"twin": 1, "per_language": num_languages}.get(settings.encoders)
                count = count or int(settings.encoders[1:])
                for _ in range(count):
                    self.language_encoders.append(InferenceNetwork(copy.deepcopy(semantic), d, lang_emb))
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
        self.step = 0  # set by the trainer before every step (on_step): the KL annealing schedule

    def on_step(self, step: int) -> None:
        self.step = step

    def kl_weight(self) -> float:
        return min(1.0, self.step / self.s.anneal_steps) if self.s.kl else 0.0

    # ------------------------------------------------------------------ pieces
    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The sentence embedding: the mean of the semantic variable, (B, d)."""
        return self.semantic(ids, mask)[0]

    def decode_nll(self, targets, target_mask, lang, z_sem, z_lang) -> torch.Tensor:
        """-log p(x | z_sem, z_lang) per sentence, (B,), with the decoder of each sentence's language."""
        if len(self.decoders) == 1:
            return self.decoders[0].nll(targets, target_mask, lang, z_sem, z_lang)
        out = torch.zeros(targets.shape[0], device=targets.device)
        for li in lang.unique().tolist():
            sel = lang == li
            out[sel] = self.decoders[li].nll(targets[sel], target_mask[sel], lang[sel], z_sem[sel], z_lang[sel])
        return out

    def decode_many(self, *requests: tuple) -> tuple[torch.Tensor, ...]:
        """:meth:`decode_nll` of several (targets, target_mask, lang, z_sem, z_lang) requests as one batch (one
        decoder pass instead of four small ones); returns each request's (B_r,) NLLs."""
        T = max(r[0].shape[1] for r in requests)
        padded = [[F.pad(r[0], (0, T - r[0].shape[1])), F.pad(r[1], (0, T - r[1].shape[1])), *r[2:]]
                  for r in requests]
        nll = self.decode_nll(*(torch.cat(parts) for parts in zip(*padded)))
        return nll.split([r[0].shape[0] for r in requests])

    def language_variable(self, ids, mask, lang) -> tuple[torch.Tensor, torch.Tensor]:
        enc = torch.tensor(self.encoder_of, device=lang.device)[lang]  # (B,) encoder index per sentence
        if len(self.language_encoders) == 1:
            return self.language_encoders[0](ids, mask, lang)
        d = self.semantic.mean.out_features
        mean = torch.zeros(ids.shape[0], d, device=ids.device)
        logv = torch.zeros_like(mean)
        for e in enc.unique().tolist():
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

    def vmsst_terms(self, b: dict, mu_i: torch.Tensor, logv_i: torch.Tensor, mu_j: torch.Tensor,
                    logv_j: torch.Tensor) -> dict[str, torch.Tensor]:
        out = {}
        zeros = torch.zeros_like(mu_i)
        # translation terms: p(x_i | mu_sem(x_j)) + p(x_j | mu_sem(x_i))
        translation = ((b["i_targets"], b["i_target_mask"], b["i_lang"], mu_j, zeros),
                       (b["j_targets"], b["j_target_mask"], b["j_lang"], mu_i, zeros))
        if self.s.objective == "bitranslation":
            nll_i, nll_j = self.decode_many(*translation)
            out["loss_translation"] = (nll_i + nll_j).mean()
            return out
        # ELBO: z_sem from one side of each pair, alternating within the batch (even: x_i, odd: x_j)
        even = (torch.arange(mu_i.shape[0], device=mu_i.device) % 2 == 0)[:, None]
        sem_mean, sem_logv = torch.where(even, mu_i, mu_j), torch.where(even, logv_i, logv_j)
        z_sem = sem_mean + torch.randn_like(sem_mean) * (0.5 * sem_logv).exp()
        li_mean, li_logv = self.language_variable(b["i_ids"], b["i_mask"], b["i_lang"])
        lj_mean, lj_logv = self.language_variable(b["j_ids"], b["j_mask"], b["j_lang"])
        z_li = li_mean + torch.randn_like(li_mean) * (0.5 * li_logv).exp()
        z_lj = lj_mean + torch.randn_like(lj_mean) * (0.5 * lj_logv).exp()
        nll_i, nll_j, rec_i, rec_j = self.decode_many(
            *translation, (b["i_targets"], b["i_target_mask"], b["i_lang"], z_sem, z_li),
            (b["j_targets"], b["j_target_mask"], b["j_lang"], z_sem, z_lj))
        out["loss_translation"] = (nll_i + nll_j).mean()
        rec = (rec_i + rec_j).mean()
        kl = (kl_standard_normal(sem_mean, sem_logv) + kl_standard_normal(li_mean, li_logv)
              + kl_standard_normal(lj_mean, lj_logv)).mean()
        out["loss_reconstruction"], out["loss_kl"] = rec, kl
        out["kl_weight"] = kl.new_tensor(self.kl_weight())  # on the loss's device, as every logged scalar
        out["loss_vmsst"] = out["loss_translation"] + self.s.elbo_weight * (rec + self.kl_weight() * kl)
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
        mu_i, logv_i = self.semantic(i_ids, i_mask)
        mu_j, logv_j = self.semantic(j_ids, j_mask)
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
