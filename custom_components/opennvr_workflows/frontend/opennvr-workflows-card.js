var z=globalThis,I=z.ShadowRoot&&(z.ShadyCSS===void 0||z.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,K=Symbol(),ot=new WeakMap,E=class{constructor(t,e,r){if(this._$cssResult$=!0,r!==K)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=t,this.t=e}get styleSheet(){let t=this.o,e=this.t;if(I&&t===void 0){let r=e!==void 0&&e.length===1;r&&(t=ot.get(e)),t===void 0&&((this.o=t=new CSSStyleSheet).replaceSync(this.cssText),r&&ot.set(e,t))}return t}toString(){return this.cssText}},at=s=>new E(typeof s=="string"?s:s+"",void 0,K),C=(s,...t)=>{let e=s.length===1?s[0]:t.reduce((r,i,n)=>r+(o=>{if(o._$cssResult$===!0)return o.cssText;if(typeof o=="number")return o;throw Error("Value passed to 'css' function must be a 'css' function result: "+o+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(i)+s[n+1],s[0]);return new E(e,s,K)},lt=(s,t)=>{if(I)s.adoptedStyleSheets=t.map(e=>e instanceof CSSStyleSheet?e:e.styleSheet);else for(let e of t){let r=document.createElement("style"),i=z.litNonce;i!==void 0&&r.setAttribute("nonce",i),r.textContent=e.cssText,s.appendChild(r)}},F=I?s=>s:s=>s instanceof CSSStyleSheet?(t=>{let e="";for(let r of t.cssRules)e+=r.cssText;return at(e)})(s):s;var{is:Et,defineProperty:Ct,getOwnPropertyDescriptor:Pt,getOwnPropertyNames:Ht,getOwnPropertySymbols:Tt,getPrototypeOf:Rt}=Object,B=globalThis,dt=B.trustedTypes,Ut=dt?dt.emptyScript:"",Mt=B.reactiveElementPolyfillSupport,P=(s,t)=>s,J={toAttribute(s,t){switch(t){case Boolean:s=s?Ut:null;break;case Object:case Array:s=s==null?s:JSON.stringify(s)}return s},fromAttribute(s,t){let e=s;switch(t){case Boolean:e=s!==null;break;case Number:e=s===null?null:Number(s);break;case Object:case Array:try{e=JSON.parse(s)}catch{e=null}}return e}},ht=(s,t)=>!Et(s,t),ct={attribute:!0,type:String,converter:J,reflect:!1,useDefault:!1,hasChanged:ht};Symbol.metadata??=Symbol("metadata"),B.litPropertyMetadata??=new WeakMap;var $=class extends HTMLElement{static addInitializer(t){this._$Ei(),(this.l??=[]).push(t)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(t,e=ct){if(e.state&&(e.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(t)&&((e=Object.create(e)).wrapped=!0),this.elementProperties.set(t,e),!e.noAccessor){let r=Symbol(),i=this.getPropertyDescriptor(t,r,e);i!==void 0&&Ct(this.prototype,t,i)}}static getPropertyDescriptor(t,e,r){let{get:i,set:n}=Pt(this.prototype,t)??{get(){return this[e]},set(o){this[e]=o}};return{get:i,set(o){let d=i?.call(this);n?.call(this,o),this.requestUpdate(t,d,r)},configurable:!0,enumerable:!0}}static getPropertyOptions(t){return this.elementProperties.get(t)??ct}static _$Ei(){if(this.hasOwnProperty(P("elementProperties")))return;let t=Rt(this);t.finalize(),t.l!==void 0&&(this.l=[...t.l]),this.elementProperties=new Map(t.elementProperties)}static finalize(){if(this.hasOwnProperty(P("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(P("properties"))){let e=this.properties,r=[...Ht(e),...Tt(e)];for(let i of r)this.createProperty(i,e[i])}let t=this[Symbol.metadata];if(t!==null){let e=litPropertyMetadata.get(t);if(e!==void 0)for(let[r,i]of e)this.elementProperties.set(r,i)}this._$Eh=new Map;for(let[e,r]of this.elementProperties){let i=this._$Eu(e,r);i!==void 0&&this._$Eh.set(i,e)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(t){let e=[];if(Array.isArray(t)){let r=new Set(t.flat(1/0).reverse());for(let i of r)e.unshift(F(i))}else t!==void 0&&e.push(F(t));return e}static _$Eu(t,e){let r=e.attribute;return r===!1?void 0:typeof r=="string"?r:typeof t=="string"?t.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(t=>this.enableUpdating=t),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(t=>t(this))}addController(t){(this._$EO??=new Set).add(t),this.renderRoot!==void 0&&this.isConnected&&t.hostConnected?.()}removeController(t){this._$EO?.delete(t)}_$E_(){let t=new Map,e=this.constructor.elementProperties;for(let r of e.keys())this.hasOwnProperty(r)&&(t.set(r,this[r]),delete this[r]);t.size>0&&(this._$Ep=t)}createRenderRoot(){let t=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return lt(t,this.constructor.elementStyles),t}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(t=>t.hostConnected?.())}enableUpdating(t){}disconnectedCallback(){this._$EO?.forEach(t=>t.hostDisconnected?.())}attributeChangedCallback(t,e,r){this._$AK(t,r)}_$ET(t,e){let r=this.constructor.elementProperties.get(t),i=this.constructor._$Eu(t,r);if(i!==void 0&&r.reflect===!0){let n=(r.converter?.toAttribute!==void 0?r.converter:J).toAttribute(e,r.type);this._$Em=t,n==null?this.removeAttribute(i):this.setAttribute(i,n),this._$Em=null}}_$AK(t,e){let r=this.constructor,i=r._$Eh.get(t);if(i!==void 0&&this._$Em!==i){let n=r.getPropertyOptions(i),o=typeof n.converter=="function"?{fromAttribute:n.converter}:n.converter?.fromAttribute!==void 0?n.converter:J;this._$Em=i;let d=o.fromAttribute(e,n.type);this[i]=d??this._$Ej?.get(i)??d,this._$Em=null}}requestUpdate(t,e,r,i=!1,n){if(t!==void 0){let o=this.constructor;if(i===!1&&(n=this[t]),r??=o.getPropertyOptions(t),!((r.hasChanged??ht)(n,e)||r.useDefault&&r.reflect&&n===this._$Ej?.get(t)&&!this.hasAttribute(o._$Eu(t,r))))return;this.C(t,e,r)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(t,e,{useDefault:r,reflect:i,wrapped:n},o){r&&!(this._$Ej??=new Map).has(t)&&(this._$Ej.set(t,o??e??this[t]),n!==!0||o!==void 0)||(this._$AL.has(t)||(this.hasUpdated||r||(e=void 0),this._$AL.set(t,e)),i===!0&&this._$Em!==t&&(this._$Eq??=new Set).add(t))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(e){Promise.reject(e)}let t=this.scheduleUpdate();return t!=null&&await t,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[i,n]of this._$Ep)this[i]=n;this._$Ep=void 0}let r=this.constructor.elementProperties;if(r.size>0)for(let[i,n]of r){let{wrapped:o}=n,d=this[i];o!==!0||this._$AL.has(i)||d===void 0||this.C(i,void 0,n,d)}}let t=!1,e=this._$AL;try{t=this.shouldUpdate(e),t?(this.willUpdate(e),this._$EO?.forEach(r=>r.hostUpdate?.()),this.update(e)):this._$EM()}catch(r){throw t=!1,this._$EM(),r}t&&this._$AE(e)}willUpdate(t){}_$AE(t){this._$EO?.forEach(e=>e.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(t)),this.updated(t)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(t){return!0}update(t){this._$Eq&&=this._$Eq.forEach(e=>this._$ET(e,this[e])),this._$EM()}updated(t){}firstUpdated(t){}};$.elementStyles=[],$.shadowRootOptions={mode:"open"},$[P("elementProperties")]=new Map,$[P("finalized")]=new Map,Mt?.({ReactiveElement:$}),(B.reactiveElementVersions??=[]).push("2.1.2");var et=globalThis,pt=s=>s,V=et.trustedTypes,ut=V?V.createPolicy("lit-html",{createHTML:s=>s}):void 0,vt="$lit$",b=`lit$${Math.random().toFixed(9).slice(2)}$`,bt="?"+b,Nt=`<${bt}>`,A=document,T=()=>A.createComment(""),R=s=>s===null||typeof s!="object"&&typeof s!="function",st=Array.isArray,Ot=s=>st(s)||typeof s?.[Symbol.iterator]=="function",Z=`[ 	
\f\r]`,H=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,gt=/-->/g,mt=/>/g,y=RegExp(`>|${Z}(?:([^\\s"'>=/]+)(${Z}*=${Z}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),_t=/'/g,ft=/"/g,yt=/^(?:script|style|textarea|title)$/i,rt=s=>(t,...e)=>({_$litType$:s,strings:t,values:e}),g=rt(1),qt=rt(2),Kt=rt(3),x=Symbol.for("lit-noChange"),h=Symbol.for("lit-nothing"),$t=new WeakMap,w=A.createTreeWalker(A,129);function wt(s,t){if(!st(s)||!s.hasOwnProperty("raw"))throw Error("invalid template strings array");return ut!==void 0?ut.createHTML(t):t}var Lt=(s,t)=>{let e=s.length-1,r=[],i,n=t===2?"<svg>":t===3?"<math>":"",o=H;for(let d=0;d<e;d++){let a=s[d],c,p,l=-1,f=0;for(;f<a.length&&(o.lastIndex=f,p=o.exec(a),p!==null);)f=o.lastIndex,o===H?p[1]==="!--"?o=gt:p[1]!==void 0?o=mt:p[2]!==void 0?(yt.test(p[2])&&(i=RegExp("</"+p[2],"g")),o=y):p[3]!==void 0&&(o=y):o===y?p[0]===">"?(o=i??H,l=-1):p[1]===void 0?l=-2:(l=o.lastIndex-p[2].length,c=p[1],o=p[3]===void 0?y:p[3]==='"'?ft:_t):o===ft||o===_t?o=y:o===gt||o===mt?o=H:(o=y,i=void 0);let v=o===y&&s[d+1].startsWith("/>")?" ":"";n+=o===H?a+Nt:l>=0?(r.push(c),a.slice(0,l)+vt+a.slice(l)+b+v):a+b+(l===-2?d:v)}return[wt(s,n+(s[e]||"<?>")+(t===2?"</svg>":t===3?"</math>":"")),r]},U=class s{constructor({strings:t,_$litType$:e},r){let i;this.parts=[];let n=0,o=0,d=t.length-1,a=this.parts,[c,p]=Lt(t,e);if(this.el=s.createElement(c,r),w.currentNode=this.el.content,e===2||e===3){let l=this.el.content.firstChild;l.replaceWith(...l.childNodes)}for(;(i=w.nextNode())!==null&&a.length<d;){if(i.nodeType===1){if(i.hasAttributes())for(let l of i.getAttributeNames())if(l.endsWith(vt)){let f=p[o++],v=i.getAttribute(l).split(b),j=/([.?@])?(.*)/.exec(f);a.push({type:1,index:n,name:j[2],strings:v,ctor:j[1]==="."?Q:j[1]==="?"?X:j[1]==="@"?Y:k}),i.removeAttribute(l)}else l.startsWith(b)&&(a.push({type:6,index:n}),i.removeAttribute(l));if(yt.test(i.tagName)){let l=i.textContent.split(b),f=l.length-1;if(f>0){i.textContent=V?V.emptyScript:"";for(let v=0;v<f;v++)i.append(l[v],T()),w.nextNode(),a.push({type:2,index:++n});i.append(l[f],T())}}}else if(i.nodeType===8)if(i.data===bt)a.push({type:2,index:n});else{let l=-1;for(;(l=i.data.indexOf(b,l+1))!==-1;)a.push({type:7,index:n}),l+=b.length-1}n++}}static createElement(t,e){let r=A.createElement("template");return r.innerHTML=t,r}};function S(s,t,e=s,r){if(t===x)return t;let i=r!==void 0?e._$Co?.[r]:e._$Cl,n=R(t)?void 0:t._$litDirective$;return i?.constructor!==n&&(i?._$AO?.(!1),n===void 0?i=void 0:(i=new n(s),i._$AT(s,e,r)),r!==void 0?(e._$Co??=[])[r]=i:e._$Cl=i),i!==void 0&&(t=S(s,i._$AS(s,t.values),i,r)),t}var G=class{constructor(t,e){this._$AV=[],this._$AN=void 0,this._$AD=t,this._$AM=e}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(t){let{el:{content:e},parts:r}=this._$AD,i=(t?.creationScope??A).importNode(e,!0);w.currentNode=i;let n=w.nextNode(),o=0,d=0,a=r[0];for(;a!==void 0;){if(o===a.index){let c;a.type===2?c=new M(n,n.nextSibling,this,t):a.type===1?c=new a.ctor(n,a.name,a.strings,this,t):a.type===6&&(c=new tt(n,this,t)),this._$AV.push(c),a=r[++d]}o!==a?.index&&(n=w.nextNode(),o++)}return w.currentNode=A,i}p(t){let e=0;for(let r of this._$AV)r!==void 0&&(r.strings!==void 0?(r._$AI(t,r,e),e+=r.strings.length-2):r._$AI(t[e])),e++}},M=class s{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(t,e,r,i){this.type=2,this._$AH=h,this._$AN=void 0,this._$AA=t,this._$AB=e,this._$AM=r,this.options=i,this._$Cv=i?.isConnected??!0}get parentNode(){let t=this._$AA.parentNode,e=this._$AM;return e!==void 0&&t?.nodeType===11&&(t=e.parentNode),t}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(t,e=this){t=S(this,t,e),R(t)?t===h||t==null||t===""?(this._$AH!==h&&this._$AR(),this._$AH=h):t!==this._$AH&&t!==x&&this._(t):t._$litType$!==void 0?this.$(t):t.nodeType!==void 0?this.T(t):Ot(t)?this.k(t):this._(t)}O(t){return this._$AA.parentNode.insertBefore(t,this._$AB)}T(t){this._$AH!==t&&(this._$AR(),this._$AH=this.O(t))}_(t){this._$AH!==h&&R(this._$AH)?this._$AA.nextSibling.data=t:this.T(A.createTextNode(t)),this._$AH=t}$(t){let{values:e,_$litType$:r}=t,i=typeof r=="number"?this._$AC(t):(r.el===void 0&&(r.el=U.createElement(wt(r.h,r.h[0]),this.options)),r);if(this._$AH?._$AD===i)this._$AH.p(e);else{let n=new G(i,this),o=n.u(this.options);n.p(e),this.T(o),this._$AH=n}}_$AC(t){let e=$t.get(t.strings);return e===void 0&&$t.set(t.strings,e=new U(t)),e}k(t){st(this._$AH)||(this._$AH=[],this._$AR());let e=this._$AH,r,i=0;for(let n of t)i===e.length?e.push(r=new s(this.O(T()),this.O(T()),this,this.options)):r=e[i],r._$AI(n),i++;i<e.length&&(this._$AR(r&&r._$AB.nextSibling,i),e.length=i)}_$AR(t=this._$AA.nextSibling,e){for(this._$AP?.(!1,!0,e);t!==this._$AB;){let r=pt(t).nextSibling;pt(t).remove(),t=r}}setConnected(t){this._$AM===void 0&&(this._$Cv=t,this._$AP?.(t))}},k=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(t,e,r,i,n){this.type=1,this._$AH=h,this._$AN=void 0,this.element=t,this.name=e,this._$AM=i,this.options=n,r.length>2||r[0]!==""||r[1]!==""?(this._$AH=Array(r.length-1).fill(new String),this.strings=r):this._$AH=h}_$AI(t,e=this,r,i){let n=this.strings,o=!1;if(n===void 0)t=S(this,t,e,0),o=!R(t)||t!==this._$AH&&t!==x,o&&(this._$AH=t);else{let d=t,a,c;for(t=n[0],a=0;a<n.length-1;a++)c=S(this,d[r+a],e,a),c===x&&(c=this._$AH[a]),o||=!R(c)||c!==this._$AH[a],c===h?t=h:t!==h&&(t+=(c??"")+n[a+1]),this._$AH[a]=c}o&&!i&&this.j(t)}j(t){t===h?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,t??"")}},Q=class extends k{constructor(){super(...arguments),this.type=3}j(t){this.element[this.name]=t===h?void 0:t}},X=class extends k{constructor(){super(...arguments),this.type=4}j(t){this.element.toggleAttribute(this.name,!!t&&t!==h)}},Y=class extends k{constructor(t,e,r,i,n){super(t,e,r,i,n),this.type=5}_$AI(t,e=this){if((t=S(this,t,e,0)??h)===x)return;let r=this._$AH,i=t===h&&r!==h||t.capture!==r.capture||t.once!==r.once||t.passive!==r.passive,n=t!==h&&(r===h||i);i&&this.element.removeEventListener(this.name,this,r),n&&this.element.addEventListener(this.name,this,t),this._$AH=t}handleEvent(t){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,t):this._$AH.handleEvent(t)}},tt=class{constructor(t,e,r){this.element=t,this.type=6,this._$AN=void 0,this._$AM=e,this.options=r}get _$AU(){return this._$AM._$AU}_$AI(t){S(this,t)}};var Dt=et.litHtmlPolyfillSupport;Dt?.(U,M),(et.litHtmlVersions??=[]).push("3.3.3");var At=(s,t,e)=>{let r=e?.renderBefore??t,i=r._$litPart$;if(i===void 0){let n=e?.renderBefore??null;r._$litPart$=i=new M(t.insertBefore(T(),n),n,void 0,e??{})}return i._$AI(s),i};var it=globalThis,m=class extends ${constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let t=super.createRenderRoot();return this.renderOptions.renderBefore??=t.firstChild,t}update(t){let e=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(t),this._$Do=At(e,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return x}};m._$litElement$=!0,m.finalized=!0,it.litElementHydrateSupport?.({LitElement:m});var jt=it.litElementPolyfillSupport;jt?.({LitElement:m});(it.litElementVersions??=[]).push("4.2.2");var N="opennvr_workflows",u=(s,t,e={})=>s.callWS({type:`${N}/${t}`,...e}),W={list:s=>u(s,"workflows/list"),runs:(s,t,e)=>u(s,"workflows/runs",{workflow:t,...e}),run:(s,t)=>u(s,"workflows/run",{run_id:t}),versions:(s,t)=>u(s,"workflows/versions",{workflow:t}),source:(s,t)=>u(s,"workflows/source",{workflow:t}),validate:(s,t)=>u(s,"workflows/validate",{yaml:t}),templates:s=>u(s,"workflows/templates"),save:(s,t)=>u(s,"workflows/save",t),setState:(s,t,e)=>u(s,"workflows/set_state",{workflow:t,state:e}),rollback:(s,t,e)=>u(s,"workflows/rollback",{workflow:t,version:e}),tryIt:(s,t,e)=>u(s,"workflows/try",{workflow:t,count:e}),mark:(s,t,e)=>u(s,"workflows/mark",{run_id:t,right:e}),approvals:s=>u(s,"approvals/list"),answer:(s,t,e)=>u(s,"approvals/answer",{approval_id:t,reply:e}),subscribe:(s,t)=>s.connection.subscribeMessage(t,{type:`${N}/workflows/subscribe`})};function nt(s){return s&&typeof s=="object"&&"message"in s?String(s.message):String(s)}var St={},xt="";async function O(s){if(xt===s.language)return;St=(await s.callWS({type:"frontend/get_translations",language:s.language,category:"exceptions",integration:[N]})).resources,xt=s.language}function _(s){return St[`component.${N}.exceptions.panel_${s}.message`]??s}var q=C`
  :host {
    display: block;
    color: var(--primary-text-color);
    font-family: var(--paper-font-body1_-_font-family, Roboto, sans-serif);
  }
  .card {
    background: var(--card-background-color, var(--ha-card-background));
    border-radius: var(--ha-card-border-radius, 12px);
    border: 1px solid var(--divider-color);
    padding: 12px 16px;
    margin: 0 0 12px;
  }
  button {
    font: inherit;
    cursor: pointer;
    border-radius: 8px;
    border: 1px solid var(--divider-color);
    background: var(--secondary-background-color);
    color: var(--primary-text-color);
    padding: 6px 12px;
    min-height: 36px;
  }
  button.primary {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
    border-color: var(--primary-color);
  }
  button[disabled] {
    opacity: 0.5;
    cursor: default;
  }
  button.on {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
  }
  .muted {
    color: var(--secondary-text-color);
  }
  .error,
  .attention {
    color: var(--error-color, #db4437);
  }
  .warning {
    color: var(--warning-color, #ffa600);
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 8px;
    align-items: center;
  }
  .grow {
    flex: 1 1 auto;
    min-width: 0;
  }
  .chip {
    display: inline-block;
    border-radius: 12px;
    padding: 2px 8px;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    border: 1px solid var(--divider-color);
  }
  .chip.test {
    border-color: var(--warning-color, #ffa600);
  }
  pre {
    white-space: pre-wrap;
    word-break: break-word;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    padding: 8px;
    border-radius: 8px;
    margin: 4px 0;
  }
  img {
    max-width: 100%;
    border-radius: 8px;
  }
  h2,
  h3 {
    margin: 8px 0;
    font-weight: 500;
  }
  select {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    min-height: 36px;
  }
  input {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    padding: 6px;
  }
`;function kt(s){return s?new Date(s*1e3).toLocaleString():""}var L=class extends m{constructor(){super(...arguments);this._rows=null;this._error="";this._done=""}connectedCallback(){super.connectedCallback(),this._load(),this._unsub=W.subscribe(this.hass,e=>{(e.kind==="approvals"||e.kind.startsWith("approval_"))&&this._load()})}disconnectedCallback(){super.disconnectedCallback(),this._unsub?.then(e=>e())}async _load(){try{await O(this.hass),this._rows=(await W.approvals(this.hass)).approvals}catch(e){this._error=nt(e)}}async _answer(e,r){this._error="";try{await W.answer(this.hass,e.approval_id,r),this._done=`${_("answered")}: ${r}`,await this._load()}catch(i){this._error=nt(i)}}render(){return this._rows===null?g`<div class="muted">…</div>`:g`
      ${this._error?g`<div class="error" role="alert">${this._error}</div>`:""}
      ${this._done?g`<div class="muted" role="status">${this._done}</div>`:""}
      ${this._rows.length===0?g`<div class="muted">${_("questions_none")}</div>`:""}
      ${this._rows.map(e=>g`
          <div class="card approval" data-approval=${e.approval_id}>
            <div class="muted">${e.workflow_name}</div>
            <h3>${e.message}</h3>
            ${e.picture?g`<img src=${e.picture} alt="" loading="lazy" />`:""}
            <div class="row replies">
              ${e.replies.map(r=>g`<button class="primary" ?disabled=${!e.may_answer} @click=${()=>this._answer(e,r)}>
                    ${r}
                  </button>`)}
            </div>
            ${e.may_answer?"":g`<div class="muted">${_("may_not_answer")}</div>`}
            <div class="muted">${_("asked")}: ${e.asked.join(", ")} · ${_("until")} ${kt(e.expires_at)}</div>
          </div>
        `)}
    `}};L.properties={hass:{attribute:!1},_rows:{state:!0},_error:{state:!0},_done:{state:!0}},L.styles=[q,C`
      .replies button {
        flex: 1 1 auto;
      }
      /* A question's first lines say what each reply does; keep them on lines of their own. */
      .approval h3 {
        white-space: pre-line;
      }
    `];customElements.get("opennvr-approvals")||customElements.define("opennvr-approvals",L);var D=class extends m{constructor(){super(...arguments);this._config={};this._ready=!1}setConfig(e){this._config=e??{}}getCardSize(){return 3}static getStubConfig(){return{}}updated(){this.hass&&!this._ready&&O(this.hass).then(()=>this._ready=!0)}render(){return this.hass?g`<div class="card">
      <h2>${this._config.title??_("card_title")}</h2>
      <opennvr-approvals .hass=${this.hass}></opennvr-approvals>
    </div>`:g``}};D.properties={hass:{attribute:!1},_config:{state:!0},_ready:{state:!0}},D.styles=q;async function zt(){for(let s=0;s<600;s++){let t=document.querySelector("home-assistant")?.hass;if(t)return t;await new Promise(e=>setTimeout(e,100))}return null}if(!customElements.get("opennvr-approvals-card")){customElements.define("opennvr-approvals-card",D);let s=window;s.customCards=s.customCards??[],s.customCards.push({type:"opennvr-approvals-card",get name(){return _("card_name")},get description(){return _("card_description")}}),zt().then(t=>t?O(t):void 0).catch(()=>{})}
