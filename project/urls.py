"""URL map: admin, login/logout, health, metrics, the API and the chat page."""
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog

from apikeys import widget
from docmind import accounts
from docmind.schema_views import SchemaDocsView, SchemaView
from kb import reader
from memory.views import memories_page
from project import health
from project.telemetry.views import MetricsView
from sso import views as sso_views
from sso.forms import AdminSignInForm

admin.site.site_header = _("DocMind administration")
admin.site.site_title = "DocMind"
admin.site.login_form = AdminSignInForm

# JSON under /api/, Django's pages elsewhere.
handler400 = "docmind.http_errors.bad_request"
handler403 = "docmind.http_errors.permission_denied"
handler404 = "docmind.http_errors.page_not_found"
handler500 = "docmind.http_errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", sso_views.SignInView.as_view(), name="login"),
    path("logout/", sso_views.SignOutView.as_view(), name="logout"),
    path("", include("sso.urls")),
    path("healthz", health.healthz, name="healthz"),
    # Browsers ask for /favicon.ico on every page that names no icon (the admin's, the API's).
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("docmind/favicon.ico"), permanent=True)),
    path("metrics", MetricsView.as_view(), name="metrics"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/auth/token/", accounts.TokenView.as_view(), name="api-token"),
    path("api/me/", accounts.MeView.as_view(), name="api-me"),
    path("api/", include("sso.api_urls")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path("api/docs/", SchemaDocsView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/kb/documents/<int:pk>/file/", reader.DocumentFileView.as_view(), name="kb-document-file"),
    path("documents/<int:pk>/", reader.document_reader, name="kb-document-reader"),
    path("documents/<int:pk>/pages/<int:number>.png", reader.document_page_image, name="kb-document-page"),
    path("api/kb/", include("kb.urls")),
    path("api/kb/", include("curation.urls")),
    path("api/reviews/", include("review.urls")),
    path("api/audit/", include("audit.urls")),
    path("api/kbs/", include("kb.kbs_urls")),
    path("api/keys/", include("apikeys.urls")),
    path("widget/frame/", widget.widget_frame, name="widget-frame"),
    path("api/eval/", include("evals.urls")),
    path("api/", include("chat.api_urls")),
    path("api/", include("memory.urls")),
    path("memories/", memories_page, name="memories"),
    path("eval/", include("evals.page_urls")),
    path("", include("chat.urls")),
]
