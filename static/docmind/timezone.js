// Tells the server the browser's time zone, so that pages show dates in it (they are stored in UTC).
// A cookie rather than a request parameter: every page, the admin's included, is rendered with it.
(function () {
  "use strict";
  let zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
  // IANA names ("America/New_York") are cookie-safe as they are; the server reads the value unencoded.
  if (!/^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone)) return;
  const current = document.cookie.match(/(?:^|;\s*)docmind_tz=([^;]*)/);
  if (current && current[1] === zone) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = "docmind_tz=" + zone + "; Path=/; Max-Age=31536000; SameSite=Lax" + secure;
})();
