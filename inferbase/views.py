"""Pages Django serves outside the API: the landing page at `/`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe


@csrf_exempt  # a page that takes no input: another method is a 405, not a CSRF failure
@require_safe
async def landing_view(request: HttpRequest) -> HttpResponse:
    """GET /: where the API is, its OpenAPI document, and the admin."""
    api_base = reverse("inference:models").removesuffix("/models")
    return render(request, "landing.html", {"api_base": request.build_absolute_uri(api_base)})
