"""Run the test identity provider: `python -m tests.sso.oidc_provider.serve DATA_DIR SEED_JSON`.

Seeds users, groups and one confidential client from SEED_JSON, listens on a free port of 127.0.0.1 and
prints `ready PORT` once it accepts connections.
"""
import json
import os
import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


def main() -> None:
    data_dir, seed_path = sys.argv[1], sys.argv[2]
    os.environ["OIDC_PROVIDER_DIR"] = data_dir
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.sso.oidc_provider.settings"
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    seed = json.loads(open(seed_path).read())
    for person in seed["users"]:
        user = User.objects.create_user(person["username"], email=person.get("email", ""),
                                        password=person["password"], first_name=person.get("given_name", ""),
                                        last_name=person.get("family_name", ""))
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in person.get("groups", [])])
    client = seed["client"]
    Application.objects.create(
        name="DocMind", client_id=client["id"], client_secret=client["secret"],
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(client["redirect_uris"]),
        post_logout_redirect_uris=" ".join(client.get("post_logout_redirect_uris", [])),
        algorithm=Application.RS256_ALGORITHM, skip_authorization=True)
    server = make_server("127.0.0.1", 0, get_wsgi_application(), server_class=_Server, handler_class=_QuietHandler)
    print(f"ready {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
