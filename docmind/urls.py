"""URL map: admin, login/logout, health, the API and the chat page."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from docmind import accounts, health
from memory.views import memories_page

admin.site.site_header = "DocMind administration"
admin.site.site_title = "DocMind"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html",
                                                redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", health.healthz, name="healthz"),
    path("api/auth/token/", accounts.TokenView.as_view(), name="api-token"),
    path("api/me/", accounts.MeView.as_view(), name="api-me"),
    path("api/kb/", include("kb.urls")),
    path("api/", include("chat.api_urls")),
    path("api/", include("memory.urls")),
    path("memories/", memories_page, name="memories"),
    path("", include("chat.urls")),
]
